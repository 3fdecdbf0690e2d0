"""The Tuning page's best-point panel: the best trial with its uncertainty, and the
"Train this" hand-off to Live training (:func:`dropedge_explorer.studies.tuned.train_request`)."""
from __future__ import annotations

import re
from collections.abc import Callable

import pandas as pd
import streamlit as st
from dropedge_core import samplers

from app_shared import job_links
from app_shared.text import plain
from dropedge_explorer import env
from dropedge_explorer.studies import tuned, tuning, tuning_noise
from dropedge_explorer.training import TrainConfig

__all__ = [
    "LIVE_PAGE", "ss", "controls", "current_job", "leave_job", "read_only_note", "start_job", "stop_button",
    "stop_job", "job_status", "best_point", "seed_check", "study_handle",
    "trials_table", "settle_study_name",
]

LIVE_PAGE = "app_pages/live_training.py"
PAGE, JOB_PARAM = "tuning", "study_job"
ss = st.session_state


def current_job():
    """This page's study job: the one the URL's ``study_job`` names (a reloaded page: its
    settings, base config and study name come with it), else this session's."""
    found = job_links.from_url(PAGE, JOB_PARAM, "tuning", "tuning study")
    if found is not None:
        ss.update(tune_job=found, tune_base=found.base, tune_study=found.study_name, tune_keep_name=True)
        ss.pop("tune_reported", None)
    return ss.get("tune_job")


def controls() -> bool:
    """Whether this browser session may stop the study job the page shows, or start one
    beside it (its own; :func:`app_shared.job_links.controls`)."""
    return job_links.controls(PAGE)


def stop_job(job) -> None:
    """The owner's Stop (a visitor's is refused: the page draws none for them)."""
    if job is not None and controls():
        job.stop()


def stop_button(column, job, running: bool) -> None:
    """The owner's Stop button in ``column`` and the note that this tab controls the study."""
    if column.button("Stop", key="tune_stop", disabled=not running):
        stop_job(job)
    job_links.owner_note(PAGE, "study")


def leave_job() -> None:
    """Stop watching another session's study (it goes on): this session's own page, with
    its own default study name (not the watched study's: its trials are the owner's)."""
    job_links.leave(PAGE)
    for key in ("tune_job", "tune_base", "tune_reported", "tune_study", "tune_study_auto", "tune_keep_name"):
        ss.pop(key, None)


def read_only_note(job) -> None:
    """For a visitor: whose study this is, and the way back to the session's own."""
    st.info(f"You are watching the tuning study **{plain(job.study_name)}** of another browser session, "
            "read-only: its trials and results, no Start or Stop here.")
    st.button("Tune my own study", key="tune_leave", on_click=leave_job,
              help="Leave this study (it goes on) and show this session's own page.")


def start_job(job) -> bool:
    """Register ``job`` (its id goes into the URL) and queue it (it waits its turn in the
    server's line); ``False`` after an ``st.error`` when it is not this session's or the
    queue's setting (``DROPEDGE_MAX_WORKERS``) is bad."""
    if not job_links.register(job, "tuning", PAGE, JOB_PARAM):
        return False
    try:
        job.start(owner=job_links.shown_id(PAGE))
    except env.EnvError as exc:
        st.error(f"Cannot start: {exc}")
        return False
    ss.update(tune_job=job, tune_base=job.base)
    ss.pop("tune_reported", None)
    return True


def best_point(study, complete: pd.DataFrame, graph, name: str, base: TrainConfig | None,
               make_base: Callable[[], TrainConfig]) -> None:
    """The study's best trial (metrics, near-chance and tiny-validation warnings) and its
    "Train this" button; ``base`` is the running study's config (else ``make_base()``)."""
    best = tuning.best_summary(study)
    if best is not None:
        st.subheader(f"Best point: trial #{best['trial']}")
        num_val, classes = int(graph.val_mask.sum()), int(graph.num_classes)
        u = tuning.best_uncertainty(best["val_acc"], num_val, classes, complete["val_acc"])
        if u["near_chance"]:
            st.warning(f"**Near chance**: the best validation accuracy ({best['val_acc']:.1%}) is "
                       f"within two standard errors or 5 points of chance (1/{classes} = "
                       f"{u['chance']:.1%}). These trials did not learn; the best point is noise. "
                       "More epochs (the depth recipe's lr 0.001 needs ~100 at L = 8), fewer "
                       "layers or another backbone first.")
        if u["tiny"]:  # the same verdict as the contour's caption (tuning_noise.colour_range)
            st.warning(tuning_noise.tiny_validation_line(num_val, complete["val_acc"].dropna().tolist()))
        m = st.columns([2.4, 1.4, 1, 1, 1, 1.4])  # the first holds "79.8% ± 1.8%" unclipped
        m[0].metric("validation accuracy", f"{best['val_acc']:.1%} ± {u['se']:.1%}",
                    help=f"± one standard error on n = {num_val} validation nodes: the half-width "
                         "of the one-sigma Wilson interval, √(p(1−p)/n + 1/(4n²)) / (1 + 1/n), about "
                         "√(p(1−p)/n) and never 0 (a perfect score on few nodes is not exact).")
        m[1].metric("test accuracy", "—" if best["test_acc"] is None else f"{best['test_acc']:.1%}",
                    help="At the trial's best validation epoch; not used for the search.")
        m[2].metric("p_min", f"{best['p_min']:.3f}")
        m[3].metric("p_max", f"{best['p_max']:.3f}")
        m[4].metric("p_max'", f"{samplers.p_max_prime(best['p_min'], best['p_max']):.3f}")
        extras = ", ".join(f"{k} = {best[k]:.3g}" for k in tuning.OPTIONAL_PARAMS if k in best)
        m[5].caption(extras or "lr, dropout, weight decay: fixed")
        st.caption(
            f"Uncertainty: ± {u['se']:.1%} is one standard error of the best trial's validation "
            f"accuracy on {num_val} nodes; chance is {u['chance']:.1%}. "
            + (f"The top {min(5, len(complete))} trials spread by ± {u['top_std']:.1%} (std); "
               if u["top_std"] == u["top_std"] else "")
            + (f"**{u['ties']} other top trial(s) lie within two standard errors of the best**: "
               "they are as good, and their keep rates as likely the right ones."
               if u["ties"] else "No other trial lies within two standard errors of the best."))
        start = tuning_noise.start_trial(study)
        st.markdown(tuning_noise.start_point_line(best["trial"], None if start is None else start.number))
        if st.button("Train this", type="primary", key="tune_train_this",
                     help="Open Live training with this point (and the study's settings)."):
            base = base or make_base()
            ss["train_request"] = tuned.train_request(best, base, name)
            st.switch_page(LIVE_PAGE)
        seed_check(study, start, graph, name, base or make_base())


def seed_check(study, start, graph, name: str, base: TrainConfig) -> None:
    """The best trial and the start point trained again on
    :data:`~dropedge_explorer.studies.tuning_noise.DEFAULT_SEEDS` (on request: each is a full
    training run), their spread and whether the gap between them exceeds it."""
    best = study.best_trial
    seeds = tuning_noise.DEFAULT_SEEDS
    points = {"best": tuning_noise.trial_values(best)}
    if start is not None and start.number != best.number:
        points["start"] = tuning_noise.trial_values(start)
    key = (name, best.number, None if start is None else start.number, seeds)
    done = ss.setdefault("tune_spread", {})
    what = "the best trial" + (" and the start point" if "start" in points else "")
    runs_asked = len(points) * len(seeds)
    if key not in done and st.button(f"Train {what} on {len(seeds)} other seeds", key="tune_seed_check",
                                     help=f"Seeds {', '.join(map(str, seeds))}: {runs_asked} training "
                                          "runs with the study's settings."):
        with st.spinner(f"Training {what} on seeds {', '.join(map(str, seeds))}…"):
            done.clear()  # one check kept per session
            done[key] = tuning_noise.seed_spread(base, points, seeds, graph)
    runs = done.get(key)
    if runs is None:
        st.caption(f"Seed-to-seed spread: not measured yet ({runs_asked} runs).")
        return
    summary = tuning_noise.spread_summary(runs)
    st.markdown(tuning_noise.spread_caption(summary))
    st.dataframe(runs, hide_index=True, placeholder="—", key="tune_spread_runs",
                 column_config={"val_acc": st.column_config.NumberColumn("val acc", format="percent"),
                                "test_acc": st.column_config.NumberColumn("test acc", format="percent")})


def study_handle(study_name: str, storage_url: str):
    """A read handle on a stored study, kept in this session once it exists."""
    handles = ss.setdefault("tune_handles", {})
    if study_name not in handles:
        study = tuned.load_study(study_name, storage_url)
        if study is None:
            return None
        handles[study_name] = study
    return handles[study_name]


def trials_table(df: pd.DataFrame, study_name: str) -> None:
    """Every trial of the study, one row each, and the table as a CSV download."""
    num = st.column_config.NumberColumn
    st.dataframe(df, hide_index=True, placeholder="—",
                 column_config={"val_acc": num("val acc", format="percent"),
                                "test_acc": num("test acc", format="percent"),
                                "p_min": num(format="%.3f"), "p_max": num(format="%.3f"),
                                "p_max_prime": num("p_max'", format="%.3f")})
    st.download_button("Download the trials (CSV)", lambda: df.to_csv(index=False), mime="text/csv",
                       file_name=f"tuning_{re.sub(r'[^A-Za-z0-9._-]+', '_', study_name)[:80]}.csv",
                       key="tune_download", help="One row per trial; accuracies as fractions.")


def job_status(job) -> None:
    """A running study's progress bar (its trials done of those asked for), or how it ended."""
    line = f"Study **{plain(job.study_name)}**: {job.status}."  # a name typed by its owner: shown as written
    if not job.done:
        st.progress(min(job.finished / job.n_trials, 1.0), text=line)
        return
    (st.error if job.error else st.warning if job.stopped else st.success)(line)


def settle_study_name(auto_name: str) -> None:
    """The Study name box's value: a link's study name is kept, a reloaded page keeps its
    study's own; otherwise a change of settings gives the fresh default ``auto_name``."""
    if "tune_study_auto" not in ss and ss.get("tune_study"):  # a link's study name: kept
        ss["tune_study_auto"] = auto_name
    elif ss.get("tune_study_auto") != auto_name:  # settings changed: a fresh default name
        ss["tune_study_auto"] = auto_name
        if not ss.pop("tune_keep_name", False):  # (not on a reloaded page: the study's own)
            ss["tune_study"] = auto_name
