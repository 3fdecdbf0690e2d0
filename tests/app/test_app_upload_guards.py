"""The app's upload (``app_shared.upload`` calls ``csv_graph.parse_graph``, the CLI's reader)
refuses numbers in non-ASCII digits on line 1 and a protocol-0 pickle as labels in one
``st.error`` (issue 29, class 7); fixing the file brings the graph back."""
from __future__ import annotations

import pickle

from tests.helpers.app import _app, _charts, _pick_upload, _texts, _upload, sbm_csv


def test_line_1_in_full_width_digits_and_a_pickle_as_labels_are_one_error():
    files = sbm_csv()
    at = _upload(_pick_upload(_app()), edges="\uff10,\uff11\n1,2\n".encode())
    errors = _texts(at.error)
    assert len(errors) == 1 and errors[0].startswith("Cannot use your upload: edges.csv line 1: '\uff10' is "
                                                     "written with non-ASCII digits"), errors
    assert not _charts(at)
    _upload(at, edges=files["edges"], labels=pickle.dumps(["red", "blue"] * 60, protocol=0))
    errors = _texts(at.error)
    assert len(errors) == 1 and "labels.csv looks like a Python pickle (protocol 0)" in errors[0], errors
    _upload(at, labels=files["labels"])
    assert not at.error and _charts(at)
