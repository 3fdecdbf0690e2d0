"""A page's background job in its URL, and who may control it.

A job is registered in :data:`app_shared.registry.REGISTRY`, its id written as a query
parameter (``?run=<id>``, ``?sweep=<id>``, ``?study_job=<id>``) and found again by a
reloaded page — a new browser session with an empty ``st.session_state``.

Ownership: the browser session that registers a job gets its owner token
(:meth:`~app_shared.registry.JobRegistry.owner_token`) in ``_owned_jobs``, and its own URL
carries it as ``?owner=<token>``, so a reload (or the owner's link opened in another tab)
keeps control. Every other session that opens the job — by its id in a link, or from the
server's list of runs — sees it read-only: curves, status and results, no Stop, no Clear,
no queueing (:func:`controls` is ``False`` and the pages draw no such buttons). An id
grants nothing; a token that does not fit is ignored, and never echoed.

``app_shared.browser_history.sync`` writes ``st.session_state["_url_jobs"][page]`` into the page's
URL after every run of the page; the sidebar's shareable link leaves the token out
(:data:`OWNER_PARAM`). The registry is read at each call (tests swap it).
"""
from __future__ import annotations

import streamlit as st
from dropedge_core.echo import bounded

from app_shared import registry

#: The query parameter that carries a job's owner token (only in the owner's own URL).
OWNER_PARAM = "owner"

ss = st.session_state


def _owned() -> dict[str, str]:
    """This browser session's owner tokens, by job id."""
    return ss.setdefault("_owned_jobs", {})


def show_in_url(page: str, param: str, job_id: str) -> None:
    """Show the job ``job_id`` on ``page``: its id in the URL as ``param`` (with its owner
    token when this session owns it), remembered as shown."""
    ss[f"_job_{page}"] = job_id
    ss.setdefault(f"_jobs_seen_{page}", set()).add(job_id)
    query = {param: job_id}
    token = _owned().get(job_id)
    if token:
        query[OWNER_PARAM] = token
    ss.setdefault("_url_jobs", {})[page] = query


def leave(page: str) -> None:
    """``page`` shows no registered job any more (the URL loses its id; ids shown before
    stay ignored, so the browser's lagging URL does not bring it back)."""
    ss.pop(f"_job_{page}", None)
    ss.setdefault("_url_jobs", {}).pop(page, None)


def controls(page: str) -> bool:
    """Whether this browser session may stop, clear or add to the job ``page`` shows: a
    job not registered yet (its own, new) or one whose owner token it holds."""
    job_id = ss.get(f"_job_{page}")
    return job_id is None or job_id in _owned()


def shown_id(page: str) -> str | None:
    """The id of the registered job ``page`` shows (``None``: none)."""
    return ss.get(f"_job_{page}")


def from_url(page: str, param: str, kind: str, what: str):
    """The job of ``kind`` that ``page``'s URL names under ``param`` when this session has
    never shown it (a reloaded page, a shared link), else ``None``; an unknown or expired
    id is one ``st.warning`` naming ``what`` (e.g. "training run"), shown once, with the
    id cut (:func:`dropedge_core.echo.bounded`: a link's value may be of any length).

    The session controls the job only when the URL's ``owner`` is the job's token.
    Ids this session showed before are ignored: the browser updates its URL after a run
    ends, so a rerun started at once (a second click) may carry the previous job's id."""
    wanted = st.query_params.get(param)
    if not wanted or wanted in ss.get(f"_jobs_seen_{page}", ()):
        return None
    job = registry.REGISTRY.get(wanted, kind)
    if job is not None:
        token = st.query_params.get(OWNER_PARAM)
        if registry.REGISTRY.is_owner(wanted, token):
            _owned()[wanted] = token
        elif token:  # a stale or wrong owner link: read-only, and the token is not repeated
            st.info(f"The owner key of this link does not fit the {what} {wanted}: you see it "
                    "read-only.")
        show_in_url(page, param, wanted)
    elif ss.get(f"_job_missing_{page}") != wanted:
        ss[f"_job_missing_{page}"] = wanted
        st.warning(f"The {what} {bounded(wanted, quote=False)} of this link is not on this server "
                   "any more (finished jobs are kept for an hour, or the server restarted).")
    return job


def register(job, kind: str, page: str, param: str, capped: bool = True) -> bool:
    """Register ``job`` (before it starts), take its owner token and put its id into
    ``page``'s URL; ``False`` after an ``st.error`` when the server runs too many jobs
    already (``capped``; a job of the fair queue is not), or when ``job`` is another
    session's (registered, its token not held here)."""
    known = registry.REGISTRY.id_of(job)
    if known is not None and known not in _owned():
        st.error("These runs belong to another browser session: you can watch them, not add to them.")
        return False
    try:
        job_id = registry.REGISTRY.register(job, kind, capped=capped)
    except registry.RegistryFull as exc:
        st.error(f"Cannot start now: {exc}.")
        return False
    _owned()[job_id] = registry.REGISTRY.owner_token(job_id)
    show_in_url(page, param, job_id)
    return True


def owner_note(page: str, what: str) -> None:
    """For the owner: one caption saying that this tab's URL controls the job."""
    if shown_id(page) is not None and controls(page):
        st.caption(f"This {what} is yours: this tab's address carries its owner key, so a reload "
                   "keeps Stop. The sidebar's “Link to this view” leaves the key out: whoever "
                   "opens it watches, read-only.")


__all__ = ["OWNER_PARAM", "controls", "from_url", "leave", "owner_note", "register", "show_in_url",
           "shown_id"]
