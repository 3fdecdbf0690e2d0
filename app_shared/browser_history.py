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
change on a page pushes an entry (Back undoes it). Streamlit's internals that this
needs are in :mod:`app_shared.st_internals`, checked against the supported versions.
"""
from __future__ import annotations

import json
from urllib.parse import urlencode

import streamlit as st

from app_shared import job_links, st_internals
from app_shared.job_links import OWNER_PARAM
from app_shared.pickers import DEFAULT_DATASET, UPLOAD, dataset_splits, selection
from app_shared.text import plain
from app_shared.training_view import run_link_values
from dropedge_explorer import links

#: An owner cookie's attributes: the whole site, a week, never sent by another site's page.
COOKIE_ATTRIBUTES = f"path=/; max-age={job_links.COOKIE_MAX_AGE_S}; SameSite=Strict"

__all__ = ["COOKIE_ATTRIBUTES", "page_query", "restore", "restore_url_state", "resume_after_stop",
           "share_link", "sync"]


def restore(page: str) -> None:
    """A session's first run (a link opened) and a Back/Forward run: the URL's values go
    into the session before the pickers are drawn (:func:`restore_url_state`)."""
    if st_internals.is_history_run():
        st.session_state.pop("_url_restored", None)
    restore_url_state(page)


def _query() -> dict[str, str]:
    return {k: st.query_params[k] for k in st.query_params}


def restore_url_state(page: str) -> None:
    """Before the pickers are drawn, on a session's first run (a link was opened): put the
    URL's values (sidebar and ``page``'s controls) into the session. Values that cannot be
    used are named in a sidebar warning.

    Only the first run: the browser updates its URL after a run ends, so a rerun that a
    quick second click starts may still carry the previous run's URL — restoring from it
    would undo that click."""
    ss = st.session_state
    if ss.get("_url_restored"):
        return
    ss["_url_restored"] = True
    query = _query()
    if not query:
        return
    values, errors = links.decode(links.spec_for(page), query)
    if page == "live_training":  # a run's link: its own data and settings under the link's values
        values = run_link_values(query) | values
    dataset = values.get("dataset", ss.get("dataset", DEFAULT_DATASET))
    if "split" in values and values["split"] not in dataset_splits(dataset):
        errors.append(f"split={values.pop('split')} ignored: not a split of {dataset} "
                      f"(allowed: {', '.join(dataset_splits(dataset))})")
    ss.update({links.session_key(k, dataset): v for k, v in values.items()})
    ss["_url_errors"] = errors
    ss["_url_written"] = query
    ss["_url_values"] = set(values)  # a recipe fills its widgets once: not over these


def share_link() -> None:
    """The sidebar's "Link to this view": the URL with the current state, copyable (and,
    once, why the browser's history is handled the plain way: :data:`st_internals.PROBLEM`)."""
    ss = st.session_state
    with st.sidebar:
        for line in ss.pop("_url_errors", None) or []:
            st.warning(f"Link: {plain(line)}")
        if st_internals.PROBLEM and not ss.get("_internals_warned"):
            ss["_internals_warned"] = True
            st.warning(st_internals.PROBLEM)
        with st.expander("Link to this view"):
            base = str(getattr(st.context, "url", "") or "").split("?")[0]
            # a job's owner key controls it: whoever opens the shared link watches, read-only
            query = {k: v for k, v in (ss.get("_url_written") or {}).items() if k != OWNER_PARAM}
            st.code(base + ("?" + urlencode(query) if query else ""), language=None, wrap_lines=True)
            st.caption("Copy it (the icon at the right): opening it restores the sidebar and "
                       "this page's main controls. An uploaded graph is not part of the link.")


def page_query(page: str) -> dict[str, str]:
    """The query of the sidebar's and ``page``'s current values."""
    ss = st.session_state
    sel = selection()
    values = {"dataset": sel.dataset, "split": sel.split, "sampler": sel.sampler,
              "p_range": (sel.p_min, sel.p_max), "layers": sel.layers, "seed": sel.seed}
    keys = {k: links.session_key(k, sel.dataset) for k in links.PAGES.get(page, {})}
    values.update({k: ss[key] for k, key in keys.items() if key in ss})
    query = links.encode(links.spec_for(page), values)
    if sel.dataset == UPLOAD:  # an upload's files stay in the browser: not linkable
        query.pop("dataset", None)
        query.pop("split", None)
    query.update(ss.get("_url_jobs", {}).get(page, {}))  # a job's id (app_shared.job_links)
    return query


def sync(page: str) -> None:
    """After the page ran: the URL holds the sidebar's and ``page``'s values.

    On the first run of a page (a page change, or the session's first run) the query is
    set without Streamlit's message, which would push a second entry after the one the
    page change pushed, and a script replaces that entry's URL instead. A later change is
    pushed by Streamlit (one entry per change, Back undoes it).

    Every run (Back/Forward aside) also sends a guard script: if the address bar does not
    show this run's query, it replaces the entry's URL. A run interrupted by a quick widget
    change (the first slider step while the page's first run was still drawing) could lose
    the first run's script while the server believed the URL written; the next run then
    saw no change to push, and a link copied from the address bar reopened the page's
    first values. The page counts as written only once its script was sent. The same
    script writes the owner cookies of this session's jobs
    (:func:`app_shared.job_links.owner_cookies`): a reload finds them, the URL shows no key."""
    ss = st.session_state
    query = page_query(page)
    history = st_internals.is_history_run()
    first = ss.get("_url_page") != page and not history
    current = {k: st.query_params[k] for k in st.query_params}
    if not (first and st_internals.set_query_quietly(query)) and current != query:
        st.query_params.from_dict(query)
    if not history:  # a Back/Forward run shows its entry's URL: nothing to write
        ss["_url_nonce"] = ss.get("_url_nonce", 0) + 1  # a new element: the script runs again
        search = json.dumps("?" + urlencode(query) if query else "")
        path = json.dumps("/" + page)
        # the owner keys of this session's jobs stay in the browser, not in its address bar
        cookies = "".join(f"document.cookie = {json.dumps(f'{name}={token}; {COOKIE_ATTRIBUTES}')};"
                          for name, token in job_links.owner_cookies().items())
        with st.sidebar:  # may raise when a newer run waits: that run writes the page again
            st.html(f"<script data-n='{ss['_url_nonce']}'>{cookies}"
                    f"if (window.location.pathname.endsWith({path}) "
                    f"&& window.location.search !== {search}) window.history.replaceState("
                    f"window.history.state, '', window.location.pathname + {search});</script>",
                    unsafe_allow_javascript=True)
    ss["_url_page"] = page
    ss["_url_written"] = query


def resume_after_stop() -> None:
    """After ``st.stop()`` in a page: let the frame still send the URL and the link.

    ``st.stop()`` leaves the run's requests at STOP, and every message sent after it raises
    the stop again: the URL of a page that stopped (e.g. the class view waiting for its
    "Train" button) kept the previous page's query. The stop has done its work (the page's
    script ended); the frame's last elements are sent (:func:`st_internals.resume_after_stop`)."""
    st_internals.resume_after_stop()
