"""Live training runs that outlive the browser tab: which session a page shows, its id in
the URL, and the list of every session's runs on this server.

A page's :class:`~dropedge_explorer.jobs.live.TrainingSession` lists its jobs in the
server's queue (:mod:`dropedge_explorer.jobs`: worker processes train and store them,
nobody need watch) and, once it has runs, is registered in
:data:`dropedge_explorer.jobs.registry.REGISTRY` (read at each call: tests swap it) under an id that the
page writes into its URL as ``?run=<id>``. A reloaded page
is a new browser session with an empty ``st.session_state``: :func:`live_session` reads
the id and shows that session again, finished runs included; an expired or unknown id is
one warning.

Only the browser session that started the runs controls them (:mod:`app_shared.job_links`:
its owner token); any other session that opens them — the server's list below, a link
with the id — watches read-only, and :func:`back_to_mine` takes it back to its own runs.
"""
from __future__ import annotations

import streamlit as st

from app_shared import job_links
from app_shared.text import plain
from dropedge_explorer import env, figures
from dropedge_explorer.jobs import registry
from dropedge_explorer.jobs.live import Changes, TrainingSession
from dropedge_explorer.jobs.records import RunRecord
from dropedge_explorer.jobs.registry import is_active
from dropedge_explorer.training import TrainConfig

#: The URL parameter that names the page's training session.
RUN_PARAM = "run"
KIND = "training"
PAGE = "live_training"
ss = st.session_state


def data_name(config: TrainConfig) -> str:
    """``"cora (semi)"``: the data a run trains on, as the page names it."""
    return f"{config.dataset} ({config.split})" if config.split else config.dataset


def controls() -> bool:
    """Whether this browser session may start, stop, clear or queue runs in the session
    the page shows (its own; :func:`app_shared.job_links.controls`)."""
    return job_links.controls(PAGE)


def _keep_mine() -> None:
    """Before the page shows another session's runs: keep this session's own to return to."""
    if controls() and "live_training" in ss:
        ss["lt_mine"] = (ss["live_training"], job_links.shown_id(PAGE))


def attach(job: TrainingSession, job_id: str) -> None:
    """Show ``job`` on this page from now on (its id in the URL; read-only unless this
    session owns it)."""
    if job is not ss.get("live_training"):
        _keep_mine()
    ss["live_training"] = job
    ss.pop("lt_cursor", None)  # a new poller of that session
    job_links.show_in_url(PAGE, RUN_PARAM, job_id)


def back_to_mine() -> None:
    """Leave the runs watched read-only: show this session's own again (new if none)."""
    mine, job_id = ss.pop("lt_mine", (None, None))
    job_links.leave(PAGE)
    ss["live_training"] = mine if mine is not None else TrainingSession()
    ss.pop("lt_cursor", None)
    if job_id is not None:
        job_links.show_in_url(PAGE, RUN_PARAM, job_id)


def live_session() -> TrainingSession:
    """This page's training session: the one the URL's ``run`` names (a reloaded page, a
    shared link), else this browser session's own (new: no idle stop)."""
    before = (ss.get("live_training"), job_links.shown_id(PAGE)) if controls() else None
    job = job_links.from_url(PAGE, RUN_PARAM, KIND, "training run")
    if job is not None:
        if before is not None and before[0] not in (None, job) and not controls():
            ss["lt_mine"] = before  # a link to someone's runs: this session's own stay kept
        ss["live_training"] = job
        ss.pop("lt_cursor", None)
    if "live_training" not in ss:
        ss["live_training"] = TrainingSession()
    return ss["live_training"]


def submit(live: TrainingSession, configs: list[TrainConfig], graph) -> bool:
    """Register the session (its id goes into the URL) and queue ``configs`` as one job in
    the server's line (never refused for waiting); ``False``
    after an ``st.error`` when the runs are another session's (watched read-only) or the
    queue's setting (``DROPEDGE_MAX_WORKERS``) is bad."""
    if not controls():
        st.error("These runs belong to another browser session: you can watch them, not add to them.")
        return False
    try:
        live.queue  # noqa: B018 (made here: a bad setting is one st.error, before registering)
    except env.EnvError as exc:
        st.error(f"Cannot start: {exc}")
        return False
    if not job_links.register(live, KIND, PAGE, RUN_PARAM):
        return False
    live.submit(configs, graph, owner=job_links.shown_id(PAGE))
    return True


def stop(live: TrainingSession) -> None:
    """The owner's Stop (a visitor's is refused: the page draws none for them)."""
    if controls():
        live.stop("stopped by its owner (Stop)")


def clear(live: TrainingSession) -> None:
    """The owner's "Clear runs" (a visitor's is refused)."""
    if controls():
        live.clear()


def read_only_note() -> None:
    """For a visitor: whose runs these are, and the way back to the session's own."""
    st.info(f"You are watching the runs **{job_links.shown_id(PAGE)}** of another browser session, "
            "read-only: their curves and results, no Start, Stop or Clear here. Only the session "
            "that started them (with its owner link) controls them.")
    st.button("Train my own runs", key="lt_back_to_mine", on_click=back_to_mine,
              help="Leave these runs (they go on) and show this session's own.")


def poll(live: TrainingSession) -> Changes:
    """Poll ``live`` with this page's own cursor (several pages may watch one session)."""
    changes = live.changes(ss.get("lt_cursor", {}))
    ss["lt_cursor"] = changes.cursor
    return changes


def _summary(runs: list[RunRecord]) -> str:
    if not runs:
        return "no runs"
    last = next((r for r in reversed(runs) if r.status == "running"), runs[-1])
    return f"{last.label} on {data_name(last.config)}: {last.status.replace('_', ' ')} — {last.message}"


def others_in_progress(poll_s: float = 3.0) -> None:
    """Every other training session of this server (in progress or recently finished),
    drawn only when asked ("Show the other runs of this server"): each with its curves and
    a button to follow it on this page, redrawn every ``poll_s`` seconds while one of them
    trains. Drawn on every page of a class by default, they cost the server CPU that grew
    with the square of the class (30 pages, each drawing 29 sessions' curves)."""
    mine = ss.get("live_training")
    others = [e for e in registry.REGISTRY.entries(KIND) if e.job is not mine]
    if not others:
        return
    running = sum(e.active for e in others)
    left, right = st.columns([2.2, 4])  # the toggle's label whole at 1280 px
    shown = left.toggle("Show the other runs of this server", key="lt_show_others",
                        help="Every other session's runs with their curves (also those of closed "
                             "or reloaded tabs), to watch one here read-only.")
    right.caption(f"{running} in progress, {len(others) - running} finished.")
    if shown:
        st.fragment(_draw_others, run_every=poll_s if running else None)(others)


def _draw_others(others: list) -> None:
    with st.container(border=True):
        for entry in reversed(others):
            live: TrainingSession = entry.job
            runs = [r for r in live.runs if r.events]
            st.markdown(f"**{entry.job_id}** · {'in progress' if is_active(live) else 'finished'} · "
                        f"{plain(_summary(live.runs))}")
            if runs:
                seen = tuple((r.label, len(r.events)) for r in runs)
                st.plotly_chart(live.figure("overview", seen, lambda runs=runs: figures.training_curves(
                    {r.label: r.history for r in runs}, samplers={r.label: r.sampler for r in runs})),
                    key=f"lt_other_{entry.job_id}")
            if st.button("Show on this page", key=f"lt_follow_{entry.job_id}",
                         help="Watch these runs here, read-only (their id goes into the link); "
                              "only the session that started them can stop or clear them."):
                attach(live, entry.job_id)
                st.rerun()


__all__ = ["KIND", "RUN_PARAM", "attach", "back_to_mine", "clear", "controls", "data_name", "live_session",
           "others_in_progress", "poll", "read_only_note", "stop", "submit"]
