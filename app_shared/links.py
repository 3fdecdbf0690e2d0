"""The link and the browser's history: the session's state in the URL, one history entry
per view.

How Streamlit 1.67's frontend moves the history (``static/js/index.*.js``):

- a page change (a click in the sidebar's navigation) pushes ``/<page>`` when the new
  session starts (``maybeUpdatePageUrl``);
- every change of ``st.query_params`` during a run pushes ``/<page>?<query>``
  (``handlePageInfoChanged``), except during a run started by Back/Forward, where it
  replaces the entry;
- Back/Forward (``popstate``) reruns the entry's page with the entry's query string, and
  the run's context says so (``is_history_navigation``).

So left alone, a page change made two entries (``/B`` and ``/B?<B's state>``): Back stayed on
B, and a history run showed the session's latest values, not the entry's. Here: a history
run restores the entry's values (as a link does); the first run of a page writes its query
by replacing the entry the page change pushed (one entry per page visit); a control
change on a page pushes an entry (Back undoes it).
"""
from __future__ import annotations

import json
from urllib.parse import urlencode

import streamlit as st
from streamlit.runtime.scriptrunner_utils.script_requests import ScriptRequestType
from streamlit.runtime.scriptrunner_utils.script_run_context import get_script_run_ctx
from streamlit.runtime.state import get_session_state

import app_shared as ui
from app_shared import urlstate

__all__ = ["restore", "page_query", "sync", "resume_after_stop"]


def _history_run() -> bool:
    ctx = get_script_run_ctx()
    return bool(ctx is not None and ctx.is_history_navigation)


def restore(page: str) -> None:
    """A session's first run (a link opened) and a Back/Forward run: the URL's values go
    into the session before the pickers are drawn (:func:`app_shared.restore_url_state`)."""
    if _history_run():
        st.session_state.pop("_url_restored", None)
    ui.restore_url_state(page)


def page_query(page: str) -> dict[str, str]:
    """The query of the sidebar's and ``page``'s current values."""
    ss = st.session_state
    sel = ui.selection()
    values = {"dataset": sel.dataset, "split": sel.split, "sampler": sel.sampler,
              "p_range": (sel.p_min, sel.p_max), "layers": sel.layers, "seed": sel.seed}
    keys = {k: urlstate.session_key(k, sel.dataset) for k in urlstate.PAGES.get(page, {})}
    values.update({k: ss[key] for k, key in keys.items() if key in ss})
    query = urlstate.encode(urlstate.spec_for(page), values)
    if sel.dataset == ui.UPLOAD:  # an upload's files stay in the browser: not linkable
        query.pop("dataset", None)
        query.pop("split", None)
    query.update(ss.get("_url_jobs", {}).get(page, {}))  # a job's id (app_shared.job_links)
    return query


def sync(page: str) -> None:
    """After the page ran: the URL holds the sidebar's and ``page``'s values.

    On the first run of a page (a page change, or the session's first run) the query is
    set without Streamlit's message, which would push a second entry after the one the
    page change pushed, and a script replaces that entry's URL instead."""
    ss = st.session_state
    query = page_query(page)
    first = ss.get("_url_page") != page and not _history_run()
    ss["_url_page"] = page
    current = {k: st.query_params[k] for k in st.query_params}
    if first:
        with get_session_state().query_params() as qp:
            qp.clear_with_no_forward_msg(preserve_embed=True)
            for key, value in query.items():
                qp.set_with_no_forward_msg(key, value)
        ctx = get_script_run_ctx()
        if ctx is not None:
            ctx.query_string = urlencode(query)
        ss["_url_nonce"] = ss.get("_url_nonce", 0) + 1  # a new element: the script runs again
        search = json.dumps("?" + urlencode(query) if query else "")
        with st.sidebar:
            st.html(f"<script data-n='{ss['_url_nonce']}'>window.history.replaceState(window.history.state,"
                    f" '', window.location.pathname + {search});</script>", unsafe_allow_javascript=True)
    elif current != query:
        st.query_params.from_dict(query)
    ss["_url_written"] = query


def resume_after_stop() -> None:
    """After ``st.stop()`` in a page: let the frame still send the URL and the link.

    ``st.stop()`` leaves the run's requests at STOP, and every message sent after it raises
    the stop again: the URL of a page that stopped (e.g. the class view waiting for its
    "Train" button) kept the previous page's query. The stop has done its work (the page's
    script ended); the frame's last elements are sent."""
    ctx = get_script_run_ctx()
    requests = getattr(ctx, "script_requests", None)
    if requests is None:
        return
    with requests._lock:  # no public way to resume a stopped run (Streamlit 1.67)
        if requests._state == ScriptRequestType.STOP:
            requests._state = ScriptRequestType.CONTINUE
