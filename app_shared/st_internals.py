"""Every use of Streamlit's internals, in one place, behind a version check.

Three things the app needs have no public API in Streamlit: the browser's history (is
this run a Back/Forward, and writing a page's first query without pushing a second
history entry: :mod:`app_shared.browser_history`), resuming a run after ``st.stop()`` so the frame
still sends its URL (``app.py``), and the server's sessions, to free a closed tab's
memory (:mod:`app_shared.session_memory`). They were read from Streamlit
:data:`SUPPORTED` (the version ``requirements.txt`` pins). Under another version, or when
an internal module moved, :data:`PROBLEM` says so in one line naming the supported
range, and every function here falls back to what the public API allows: no history
handling (the URL is still written, each change one entry), no resume, no session
release. ``app.py`` shows :data:`PROBLEM` once in the sidebar.
"""
from __future__ import annotations

import re
from urllib.parse import urlencode

import streamlit as st

#: Streamlit versions whose internals this module was read against: ``(low, high)``
#: minor versions, both included.
SUPPORTED: tuple[tuple[int, int], tuple[int, int]] = ((1, 67), (1, 67))


def supported_range() -> str:
    """The supported versions in words, e.g. ``"1.67.x"`` or ``"1.66.x to 1.67.x"``."""
    (lo_major, lo_minor), (hi_major, hi_minor) = SUPPORTED
    low, high = f"{lo_major}.{lo_minor}.x", f"{hi_major}.{hi_minor}.x"
    return low if low == high else f"{low} to {high}"


def version_problem(version: str) -> str | None:
    """``None`` when ``version`` is in :data:`SUPPORTED`, else one line naming it and the
    supported range.

    Example:
        >>> version_problem("1.67.0") is None
        True
        >>> print(version_problem("1.68.1"))  # doctest: +ELLIPSIS
        Streamlit 1.68.1 is not a supported version (supported: 1.67.x): ...
    """
    match = re.match(r"(\d+)\.(\d+)", version)
    if match and SUPPORTED[0] <= (int(match[1]), int(match[2])) <= SUPPORTED[1]:
        return None
    return (f"Streamlit {version} is not a supported version (supported: {supported_range()}): "
            "the browser's Back/Forward per view and the release of closed tabs' memory are off")


try:
    from streamlit.runtime import Runtime
    from streamlit.runtime.scriptrunner_utils.exceptions import StopException
    from streamlit.runtime.scriptrunner_utils.script_requests import ScriptRequestType
    from streamlit.runtime.scriptrunner_utils.script_run_context import get_script_run_ctx
    from streamlit.runtime.state import get_session_state
except ImportError as exc:  # an internal module moved: the public fallbacks below
    _IMPORT_PROBLEM: str | None = (f"Streamlit {st.__version__}: {exc} (supported: {supported_range()}); "
                                   "the browser's Back/Forward per view and the release of closed "
                                   "tabs' memory are off")

    class StopException(Exception):  # noqa: N818 (Streamlit's name): never raised here
        """Stands in for Streamlit's own, which was not found."""
else:
    _IMPORT_PROBLEM = None

#: Why the internals are off (``None``: Streamlit is a supported version and they are on).
PROBLEM: str | None = _IMPORT_PROBLEM or version_problem(st.__version__)


def _ctx():
    return get_script_run_ctx() if PROBLEM is None else None


def is_history_run() -> bool:
    """Whether the running script was started by the browser's Back or Forward."""
    ctx = _ctx()
    return bool(ctx is not None and ctx.is_history_navigation)


def set_query_quietly(query: dict[str, str]) -> bool:
    """Set the page's query parameters without Streamlit's message to the browser (which
    would push a history entry); ``False`` when it could not (then the caller sets them
    the public way)."""
    ctx = _ctx()
    if ctx is None:
        return False
    with get_session_state().query_params() as qp:
        qp.clear_with_no_forward_msg(preserve_embed=True)
        for key, value in query.items():
            qp.set_with_no_forward_msg(key, value)
    ctx.query_string = urlencode(query)
    return True


def resume_after_stop() -> None:
    """After ``st.stop()``: let the running script send messages again.

    ``st.stop()`` leaves the run's requests at STOP, and every message sent after it raises
    the stop again; no public way resumes a stopped run."""
    requests = getattr(_ctx(), "script_requests", None)
    if requests is None:
        return
    with requests._lock:
        if requests._state == ScriptRequestType.STOP:
            requests._state = ScriptRequestType.CONTINUE


def current_session():
    """``(session_id, app_session, runtime)`` of the running script, or ``None`` (bare
    mode without a server, or the internals are off)."""
    ctx = _ctx()
    if ctx is None or not Runtime.exists():
        return None
    runtime = Runtime.instance()
    session = runtime.get_app_session(ctx.session_id)
    return None if session is None else (ctx.session_id, session, runtime)


def forget_widget_metadata(state) -> None:
    """Drop the widget metadata that Streamlit's session state keeps after ``clear()``
    (1.67): each widget's callbacks, which hold the page script's globals."""
    metadata = getattr(getattr(state, "_new_widget_state", None), "widget_metadata", None)
    if isinstance(metadata, dict):
        metadata.clear()


__all__ = ["PROBLEM", "SUPPORTED", "current_session", "forget_widget_metadata",
           "is_history_run", "resume_after_stop", "set_query_quietly", "supported_range",
           "version_problem"]
