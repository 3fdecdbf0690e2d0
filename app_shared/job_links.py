"""A page's background job in its URL: registered in :data:`app_shared.registry.REGISTRY`,
its id written as a query parameter (``?run=<id>``, ``?sweep=<id>``, ``?study_job=<id>``),
and found again by a reloaded page — a new browser session with an empty
``st.session_state``.

``app_shared.links.sync`` writes ``st.session_state["_url_jobs"][page]`` into the page's
URL after every run of the page; the registry is read at each call (tests swap it).
"""
from __future__ import annotations

import streamlit as st

from app_shared import registry
from app_shared.text import plain

ss = st.session_state


def show_in_url(page: str, param: str, job_id: str) -> None:
    """Put ``job_id`` into ``page``'s URL as ``param`` (and remember it was shown)."""
    ss[f"_job_{page}"] = job_id
    ss.setdefault(f"_jobs_seen_{page}", set()).add(job_id)
    ss.setdefault("_url_jobs", {})[page] = {param: job_id}


def from_url(page: str, param: str, kind: str, what: str):
    """The job of ``kind`` that ``page``'s URL names under ``param`` when this session has
    never shown it (a reloaded page, a shared link), else ``None``; an unknown or expired
    id is one ``st.warning`` naming ``what`` (e.g. "training run"), shown once.

    Ids this session showed before are ignored: the browser updates its URL after a run
    ends, so a rerun started at once (a second click) may carry the previous job's id."""
    wanted = st.query_params.get(param)
    if not wanted or wanted in ss.get(f"_jobs_seen_{page}", ()):
        return None
    job = registry.REGISTRY.get(wanted, kind)
    if job is not None:
        show_in_url(page, param, wanted)
    elif ss.get(f"_job_missing_{page}") != wanted:
        ss[f"_job_missing_{page}"] = wanted
        st.warning(f"The {what} {plain(wanted)} of this link is not on this server any more "
                   f"(finished jobs are kept for an hour, or the server restarted).")
    return job


def register(job, kind: str, page: str, param: str) -> bool:
    """Register ``job`` (before it starts) and put its id into ``page``'s URL; ``False``
    after an ``st.error`` when the server runs too many jobs already."""
    try:
        job_id = registry.REGISTRY.register(job, kind)
    except registry.RegistryFull as exc:
        st.error(f"Cannot start now: {exc}.")
        return False
    show_in_url(page, param, job_id)
    return True


__all__ = ["from_url", "register", "show_in_url"]
