"""Live training: train a backbone with a sampler and watch the curves grow.

Runs live in a :class:`dropedge_explorer.jobs.live.TrainingSession` that outlives the browser tab: its
jobs wait in the server's fair queue and train in worker processes, which store the runs,
whether or not a page watches; the session's id is in the URL (``?run=<id>``), so a reloaded page shows it
again (:mod:`app_shared.live_runs`). The fragment below redraws it every ``POLL_S`` seconds
while a run of it trains, every ``WAITING_POLL_S`` while its jobs only wait in line.
"""
from __future__ import annotations

import streamlit as st
from dropedge_core.models import BACKBONES

import app_shared as ui
from app_shared import job_links, live_runs
from app_shared import training_view as tv
from app_shared.training_view import DEFAULTS
from dropedge_explorer import figures
from dropedge_explorer.jobs.live import COMPARE_SAMPLERS, device_label
from dropedge_explorer.memory import MemoryLimitError
from dropedge_explorer.training import ConfigError, TrainConfig, check_trainable
from dropedge_explorer.training import forms as tf

#: Redraws while a run trains, and while the jobs only wait (a place in line changes when
#: another job starts or ends; a class of waiting pages polling fast was the server's load).
POLL_S, WAITING_POLL_S = 1.0, 3.0

ss = st.session_state
live = live_runs.live_session()  # the URL's run (a reloaded page), else this session's own
started = live_runs.poll(live).started
if started:  # a queued run started: the per-layer views follow it once it has diagnostics
    ss["lt_focus_want"] = started[-1].label

tv.take_train_request()  # "Train this" on the Tuning page: pre-fill the form

sel = ui.selection()
graph = ui.page_header("Live training", sel, labels=True)

override = ss.get("lt_override")
setting = tf.run_point({"sampler": sel.sampler, "num_layers": sel.layers, "p_min": sel.p_min,
                        "p_max": sel.p_max, "seed": sel.seed}, override)
if override:
    c1, c2 = st.columns([5, 1])
    c1.info(f"From {override['source']}: {figures.sampler_label(setting['sampler'])}, "
            f"L = {setting['num_layers']}, p_min = {setting['p_min']:.3f}, "
            f"p_max = {setting['p_max']:.3f}, seed {setting['seed']} — used instead of the "
            "sidebar's sampler, layers, keep rates and seed."
            + (f" It was tuned on **{override['dataset']}**, not {sel.dataset}."
               if override.get("dataset") not in (None, sel.dataset) else ""))
    if c2.button("Use the sidebar", key="lt_drop_override",
                 help="Forget the tuned point; take the sidebar's settings."):
        del ss["lt_override"]
        st.rerun()

for key, default in DEFAULTS.items():  # defaults via the state: a train_request may set them
    ss.setdefault(key, default)
c1, c2, c3 = st.columns([1, 1.4, 2.6])
backbone = c1.selectbox("Backbone", BACKBONES, key="lt_backbone",
                        format_func=lambda b: figures.BACKBONE_LABELS.get(b, b),
                        help="GCN, ResGCN (residual hidden layers), JKNet (output from all "
                             "hidden layers), APPNP* (propagation with teleport α).")
mode = c2.radio("Hyperparameters", tf.MODES, key="lt_mode", horizontal=True,
                help="depth recipe (default): settings that train at the sidebar's depth — the "
                     "usual GCN settings up to L = 4; from L = 5 lr 0.001, no dropout, no weight "
                     "decay, the self-feature term on, more epochs. quick: the shallow settings at "
                     "any depth (deep GCNs sit at chance). paper preset: the paper's best "
                     "hyperparameters for this dataset, split and backbone (layers and keep rates "
                     "included). custom: your values below.")
choice = tf.choose_recipe(mode, sel.dataset, sel.split, backbone)
recipe = choice.recipe
if choice.fallback:
    c3.info(f"{choice.fallback} Using the depth recipe.")
elif choice.preset:
    c3.success("Paper preset: " + ", ".join(f"{k} = {v}" for k, v in choice.preset.items())
               + ". Its layers and keep rates replace the sidebar's.")
    setting = tf.run_point(setting, choice.preset)
fixed = recipe is not None
signature = (recipe, setting["num_layers"], backbone, sel.dataset, sel.split)
if fixed and ss.get("lt_recipe_for") != signature:
    # the widgets take the recipe's values at this depth once (the hyperparameters are then
    # locked; epochs and patience stay editable: a shorter demo run is still the recipe's)
    ss["lt_recipe_for"] = signature
    tv.fill_widgets(tf.recipe_widget_fields(recipe, sel.dataset, sel.split, backbone, setting["num_layers"]),
                    keep=ss.pop("_url_values", set()))
elif not fixed:
    ss.pop("lt_recipe_for", None)
c3.caption(f"Sampler **{figures.sampler_label(setting['sampler'])}**, L = {setting['num_layers']}, "
           f"keep rates {setting['p_min']:.2f} → {setting['p_max']:.2f}, seed {setting['seed']}"
           + (" (tuned point)" if override else " (sidebar)") + ". Training on "
           f"**{device_label()}**.")

values = tf.run_values(tv.hyperparameter_widgets(fixed, backbone, setting["sampler"]), sel.dataset,
                      sel.split, backbone, setting, choice)

start = compare = False
if live_runs.controls():  # another session's runs (a link, the server's list): no buttons at all
    b = st.columns([1, 1.6, 1, 1, 3])
    start = b[0].button("Start", type="primary", key="lt_start", disabled=live.active)
    compare = b[1].button("Compare samplers", key="lt_compare", disabled=live.active,
                          help="Queue NoDrop, DropEdge and DropEdge++ with these settings and one "
                               "seed, one after another.")
    if b[2].button("Stop", key="lt_stop", disabled=not live.active,
                   help="Stop the running run at its next epoch; a waiting one leaves the line."):
        live_runs.stop(live)
    if b[3].button("Clear runs", key="lt_clear", disabled=not any(r.over for r in live.runs)):
        live_runs.clear(live)
    job_links.owner_note(live_runs.PAGE, "training run")
else:
    live_runs.read_only_note()
if start or compare:
    try:
        config = TrainConfig(**values)
        configs = ([config.replace(sampler=s) for s in COMPARE_SAMPLERS] if compare
                   else [config])
        check_trainable(config, graph)  # one class, above the memory limit: refused now
    except (ConfigError, MemoryLimitError) as exc:
        st.error(f"Cannot train with these settings: {exc}")
    else:
        if live_runs.submit(live, configs, graph):
            ss["lt_focus_want"] = live.runs[-len(configs)].label
            st.rerun()


@st.fragment(run_every=None if not live.active else POLL_S if live.current else WAITING_POLL_S)
def show_runs() -> None:
    """Poll the session's runs and draw them; rerun the page when a run starts or ends
    (its buttons follow), stop polling when none is active."""
    if tv.draw_runs(live, values["diag_every"]):
        st.rerun()


show_runs()
live_runs.others_in_progress()
