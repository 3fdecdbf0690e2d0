"""A ``DROPEDGE_DATA`` or ``DROPEDGE_CACHE`` the location parser refuses (issue 29): the app
shows one ``st.error`` naming the variable on every page and draws nothing; no exception."""
from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from tests.helpers.app import APP, TIMEOUT, UPLOAD_PAGES, _charts, _ok, _texts


@pytest.mark.parametrize("var, value, says", [
    ("DROPEDGE_DATA", "/tmp/" + "a" * 300, "has a name longer than 255 bytes"),
    ("DROPEDGE_CACHE", "/tmp/" + "a" * 300, "has a name longer than 255 bytes"),
    ("DROPEDGE_DATA", "https://example.org/planetoid", "not a URL"),
])
def test_a_bad_data_directory_is_one_error_on_every_page(monkeypatch, var, value, says):
    monkeypatch.setenv(var, value)
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.run()
    for page in UPLOAD_PAGES[1:]:
        at.switch_page(page).run()
        _ok(at)
        errors = _texts(at.error)
        assert len(errors) == 1 and errors[0].startswith(f"Cannot start: {var}"), errors
        assert says in errors[0] and f"{var} must be a directory path" in errors[0]
        assert len(errors[0]) < 400 and not _charts(at)
