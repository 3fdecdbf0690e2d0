"""A page's background job in its URL, and who may control it.

A job is registered in :data:`dropedge_explorer.jobs.registry.REGISTRY`, its id written as a query
parameter (``?run=<id>``, ``?sweep=<id>``, ``?study_job=<id>``) and found again by a
reloaded page — a new browser session with an empty ``st.session_state``.

Ownership: the browser session that registers a job gets its owner token
(:meth:`~dropedge_explorer.jobs.registry.JobRegistry.owner_token`) in ``_owned_jobs``. The token never
sits in the address bar — a teacher who projects the browser shows the class nothing that
grants control. The browser keeps it instead, as the cookie ``dropedge_owner_<job id>``
(:func:`cookie_name`, written by ``app_shared.browser_history.sync``'s script, path ``/``,
``SameSite=Strict``), which Streamlit hands a reloaded page's new session in
``st.context.cookies``: a reload (or another tab of the same browser) keeps control. For
another device, :func:`owner_note`'s "Show my control link" reveals, on request only, the
link ``?<param>=<id>&owner=<token>`` (:data:`OWNER_PARAM`); opened, it gives control, the
browser keeps the key as its cookie, and the address bar loses it after the first run.
Every other session that opens the job — by its id in a link, or from the server's list of
runs — sees it read-only: curves, status and results, no Stop, no Clear, no queueing
(:func:`controls` is ``False`` and the pages draw no such buttons). An id grants nothing; a
token that does not fit is ignored, and never echoed.

``app_shared.browser_history.sync`` writes ``st.session_state["_url_jobs"][page]`` (the id
alone) into the page's URL after every run of the page. The registry is read at each call
(tests swap it).
"""
from __future__ import annotations

from urllib.parse import urlencode

import streamlit as st
from dropedge_core.echo import bounded

from dropedge_explorer.jobs import registry

#: The query parameter of the owner's control link (never left in the address bar).
OWNER_PARAM = "owner"
#: A job's owner token is kept in the browser as the cookie ``COOKIE_PREFIX + job_id``.
COOKIE_PREFIX = "dropedge_owner_"
#: How long the browser keeps an owner cookie (a week: longer than any job is kept).
COOKIE_MAX_AGE_S = 7 * 24 * 3600

ss = st.session_state


def _owned() -> dict[str, str]:
    """This browser session's owner tokens, by job id."""
    return ss.setdefault("_owned_jobs", {})


def cookie_name(job_id: str) -> str:
    """The name of the cookie that keeps the owner token of ``job_id`` in the browser.

    Example:
        >>> cookie_name("1a2b3c4d")
        'dropedge_owner_1a2b3c4d'
    """
    return COOKIE_PREFIX + job_id


def owner_cookies() -> dict[str, str]:
    """The cookies this browser should keep: the owner token of every job this session
    owns, by cookie name (ids are hex, tokens URL-safe base64: no quoting needed)."""
    return {cookie_name(job_id): token for job_id, token in _owned().items()}


def _browser_cookies():
    """The cookies the browser sent when this session's page was loaded."""
    return st.context.cookies


def show_in_url(page: str, param: str, job_id: str) -> None:
    """Show the job ``job_id`` on ``page``: its id in the URL as ``param`` (never its owner
    token: the browser keeps that as a cookie), remembered as shown."""
    ss[f"_job_{page}"] = job_id
    ss.setdefault(f"_jobs_seen_{page}", set()).add(job_id)
    ss.setdefault("_url_jobs", {})[page] = {param: job_id}


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

    The session controls the job only when the browser's owner cookie for it
    (:func:`cookie_name`), or the URL's ``owner`` (a control link), is the job's token.
    Ids this session showed before are ignored: the browser updates its URL after a run
    ends, so a rerun started at once (a second click) may carry the previous job's id."""
    wanted = st.query_params.get(param)
    if not wanted or wanted in ss.get(f"_jobs_seen_{page}", ()):
        return None
    job = registry.REGISTRY.get(wanted, kind)
    if job is not None:
        token = st.query_params.get(OWNER_PARAM)
        kept = _browser_cookies().get(cookie_name(wanted))
        if registry.REGISTRY.is_owner(wanted, token):
            _owned()[wanted] = token
        elif registry.REGISTRY.is_owner(wanted, kept):  # this browser's own job, reloaded
            _owned()[wanted] = kept
        elif token:  # a stale or wrong owner link: read-only, and the token is not repeated
            st.info(f"The owner key of this link does not fit the {what} {wanted}: you see it "
                    "read-only.")
        show_in_url(page, param, wanted)
    elif ss.get(f"_job_missing_{page}") != wanted:
        ss[f"_job_missing_{page}"] = wanted
        st.warning(f"The {what} {bounded(wanted, quote=False)} of this link is not on this server "
                   "any more (finished jobs are kept for an hour, or the server restarted).")
    return job


def register(job, kind: str, page: str, param: str) -> bool:
    """Register ``job`` (before it starts), take its owner token and put its id into
    ``page``'s URL; ``False`` after an ``st.error`` when ``job`` is another session's
    (registered, its token not held here). Never refused for being one too many: every
    job waits its turn in the server's queue."""
    known = registry.REGISTRY.id_of(job)
    if known is not None and known not in _owned():
        st.error("These runs belong to another browser session: you can watch them, not add to them.")
        return False
    job_id = registry.REGISTRY.register(job, kind)
    _owned()[job_id] = registry.REGISTRY.owner_token(job_id)
    show_in_url(page, param, job_id)
    return True


def control_link(page: str) -> str | None:
    """The owner's control link of the job ``page`` shows: the page's address with the job's
    id and its owner token (``None``: no job shown, or not this session's)."""
    job_id = shown_id(page)
    token = _owned().get(job_id) if job_id is not None else None
    if token is None:
        return None
    base = str(getattr(st.context, "url", "") or "").split("?")[0]
    return f"{base}?{urlencode(ss['_url_jobs'][page] | {OWNER_PARAM: token})}"


def owner_note(page: str, what: str) -> None:
    """For the owner: a caption saying that this browser keeps control of the job, and
    "Show my control link" (the key for another device, shown only when asked)."""
    link = control_link(page)
    if link is None:
        return
    cols = st.columns([5, 1.6])
    cols[0].caption(f"This {what} is yours: this browser keeps its owner key (a cookie of this "
                    "site), so a reload keeps Stop. The address bar and the sidebar's “Link to this "
                    "view” carry no key: a projected screen or a shared link grants nothing.")
    if cols[1].toggle("Show my control link", key=f"{page}_control_link",
                      help="A link that gives Stop to whoever opens it: for another device of yours."):
        st.code(link, language=None, wrap_lines=True)
        st.caption("Copy it (the icon at the right) for another device of yours; whoever opens it "
                   "can stop this " + what + ".")


__all__ = ["COOKIE_MAX_AGE_S", "COOKIE_PREFIX", "OWNER_PARAM", "control_link", "controls", "cookie_name",
           "from_url", "leave", "owner_cookies", "owner_note", "register", "show_in_url", "shown_id"]
