"""Tuning: an Optuna study over the keep rates, watched live.

The study runs as a :class:`dropedge_explorer.jobs.handles.TuningJob`: a job of the
server's fair queue, in a worker process, stoppable, with a wall-time limit, that outlives
the browser tab: its id is in the URL, so a reloaded page shows it again. Trials go to an
SQLite file under ``results/`` so a study can be resumed, shared with
``python -m dropedge_core tune`` workers, and read back.
"""
from __future__ import annotations

import secrets
from functools import partial

import streamlit as st
from dropedge_core import samplers
from dropedge_core.models import BACKBONES

import app_shared as ui
from app_shared import tuning_view as tv
from dropedge_explorer import figures, paths
from dropedge_explorer.jobs.handles import TuningJob
from dropedge_explorer.jobs.live import server_queue
from dropedge_explorer.memory import MemoryLimitError
from dropedge_explorer.studies import tuning, tuning_noise
from dropedge_explorer.training import ConfigError, check_trainable
from dropedge_explorer.training import forms as tf

POLL_S = 1.0
#: Defaults sized so that a study on Cora at L = 8 says something (see the epochs' help).
DEFAULT_EPOCHS, DEFAULT_HIDDEN = 100, 64
try:  # a malformed $DROPEDGE_TUNING_STORAGE is one line, not a traceback; STORAGE: shown, no path
    STORAGE = ui.store_label(STORAGE_URL := tuning.storage_url(paths.tuning_storage()))
except ValueError as exc:
    st.error(f"Tuning storage: {ui.private(exc)}")
    st.stop()

ss = st.session_state
job: TuningJob | None = tv.current_job()  # the URL's (a reloaded page) or this session's
running = job is not None and not job.done

sel = ui.selection()
graph = ui.page_header("Tuning", sel, labels=True)
st.markdown(
    f"An Optuna study searches the keep rates of **{figures.sampler_label(sel.sampler)}** "
    f"(L = {sel.layers}, seed {sel.seed}, from the sidebar) for the best **validation** "
    "accuracy, over the paper's parametrisation (p_min, p_max' = (p_max − p_min)/(1 − p_min)), "
    "so every point has p_min ≤ p_max. The first trial is the sidebar's own keep rates; "
    "unpromising trials are pruned early.")

c = st.columns([1, 1, 1, 1, 1.2, 2])
backbone = c[0].selectbox("Backbone", BACKBONES, key="tune_backbone",
                          format_func=lambda b: figures.BACKBONE_LABELS.get(b, b))
epochs = c[1].number_input("Epochs per trial", 5, 1000, DEFAULT_EPOCHS, key="tune_epochs",
                           help="The other settings are the depth recipe's (from L = 5: lr 0.001, "
                                "no dropout, Loop on), which needs ~100 epochs to leave chance on "
                                "Cora at L = 8 (val ≈ 70%, ~15-40 s per trial on 2 CPU cores); "
                                "30 epochs leave every trial near chance.")
hidden = c[2].number_input("Hidden width", 4, 512, DEFAULT_HIDDEN, key="tune_hidden",
                           help="64 trains Cora at L = 8 as well as the recipe's 128 in half the time.")
trials = c[3].number_input("Trials", 1, tuning.MAX_TRIALS, 12, key="tune_trials",
                           help="Pruned trials (worse than the median at the same epoch) stop early.")
search = c[4].radio("Search", ["tpe", "random"], key="tune_search", horizontal=True,
                    help="tpe: Optuna's Bayesian sampler; random: the paper's random search.")
extra = c[5].multiselect("Also tune", tuning.OPTIONAL_PARAMS, key="tune_extra",
                         help=f"{tuning.SearchSpace.extra_help()}; else the depth recipe's at this depth.")
c = st.columns([1, 1, 4])
kernel = c[0].selectbox("Kernel", samplers.KERNELS, key="tune_kernel",
                        disabled=samplers.NAMED[sel.sampler][1] != "kernel",
                        help="The FD kernel of the weighted samplers (FD, DropEdge++): linear "
                             "x_u·x_v, poly (x_u·x_v)², rbf exp(-6‖x_u−x_v‖²), reverse 1 − x_u·x_v.")
directed = c[1].checkbox("Directed", key="tune_directed", disabled=sel.sampler == "nodrop",
                         help="Sample the two directions of each edge separately.")
kernel, directed = tf.sampler_options(sel.sampler, kernel, directed)
#: The run this form describes: the study's base (no diagnostics in a trial), and the base
#: of "Train this" for a study that is not this session's.
form_config = partial(tf.tuning_config, sel.dataset, sel.split, sel.sampler, sel.layers, sel.seed,
                      backbone, hidden, epochs, kernel, directed)

# a token per browser session: two sessions with the same settings get their own studies
# (one shared storage); give a session's study name to another to share it on purpose
token = ss.setdefault("tune_session_token", secrets.token_hex(3))
tv.settle_study_name(tf.study_name(ui.data_id(sel), sel.split, sel.sampler, backbone, sel.layers, hidden,
                                   epochs, sel.seed, kernel, directed, token))
name = st.text_input("Study name", key="tune_study", max_chars=200,
                     help="Trials go into this study of the storage; an existing name "
                          "resumes it (its trials should share these settings).").strip()
st.caption(f"Storage: {STORAGE} on the server (DROPEDGE_TUNING_STORAGE changes it). Other "
           "workers given the same storage and study name add their trials to this study.")

b = st.columns([1, 1, 6])
if not tv.controls():  # another session's study (its link): watched, no Start, no Stop
    tv.read_only_note(job)
elif b[0].button("Start study", type="primary", key="tune_start", disabled=running or not name):
    try:
        base = form_config().replace(diag_every=0)
        space = tuning.SearchSpace(extra=tuple(extra))
        check_trainable(base, graph)
        new = TuningJob(base, int(trials), name, STORAGE_URL, search=search, seed=sel.seed,
                        space=space, graph=graph, queue=server_queue)
    except (ConfigError, tuning.TuningError, MemoryLimitError) as exc:
        st.error(ui.private(f"Cannot start the study: {exc}".splitlines()[0]))
    except Exception as exc:  # the storage: unwritable folder, not an Optuna database, ...
        st.error(ui.private(f"Cannot open the study in {STORAGE}: {type(exc).__name__}: {exc}"
                            .splitlines()[0]))
    else:
        if tv.start_job(new):  # registered (its id in the URL), then started
            st.rerun()
if tv.controls():
    tv.stop_button(b[1], job, running)


@st.fragment(run_every=job.refresh_every(POLL_S) if job is not None else None)  # waiting: less often
def show_study() -> None:
    """Poll the job, draw the study; rerun the page once when the job ends."""
    current = ss.get("tune_job")
    mine = current is not None and current.study_name == name
    if current is not None:
        tv.job_status(current)
    try:
        study = current.study if mine else tv.study_handle(name, STORAGE_URL)
    except tuning.TuningError as exc:  # not an Optuna storage, a server that refuses, ...
        st.error(ui.private(f"Cannot read the study: {exc}".splitlines()[0]))
        return
    except Exception as exc:  # an unreadable storage is a message, not a traceback
        st.error(ui.private(f"Cannot read {STORAGE}: {type(exc).__name__}: {exc}".splitlines()[0]))
        return
    df = tuning.trials_frame(study) if study is not None else None
    if df is None or df.empty:
        st.info(f"No trials in study “{name}” yet: " + ("its first one is coming (its worker process starts, "
                "or it waits in line)." if mine and not current.done else "press “Start study”."))
    else:
        complete = df[df["state"] == "COMPLETE"]
        left, right = st.columns([1.2, 1])
        left.plotly_chart(figures.tuning_surface(complete.rename(columns={"trial": "number"}),
                                                 value="val_acc"), key="tune_surface")
        left.caption(tuning_noise.surface_note(df, int(graph.val_mask.sum())))
        right.plotly_chart(figures.tuning_history(df), key="tune_history")
        right.caption(f"{len(complete)} finished, {int((df['state'] == 'PRUNED').sum())} pruned "
                      f"of {len(df)} trials in this study.")
        tv.best_point(study, complete, graph, name, ss.get("tune_base") if mine else None, form_config)
        tv.trials_table(df, name)
    if current is not None and current.done and not ss.get("tune_reported"):
        ss["tune_reported"] = True  # once: the page's buttons follow the finished job
        st.rerun()


show_study()
