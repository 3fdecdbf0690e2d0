"""The Live training page's app-only parts: its form's widget keys, defaults and bounds,
the Tuning page's "Train this" hand-off into those widgets, and the runs' drawing (polled
by the page's fragment)."""
from __future__ import annotations

from collections.abc import Mapping

import streamlit as st
from dropedge_core import normalization, samplers

from app_shared import live_runs
from dropedge_explorer import figures, links
from dropedge_explorer.jobs import registry
from dropedge_explorer.jobs.live import TrainingSession
from dropedge_explorer.jobs.records import history_frame, runs_frame
from dropedge_explorer.training import UPLOAD_DATASET, ConfigError, TrainConfig
from dropedge_explorer.training.forms import OVERRIDE_KEYS, sampler_options

__all__ = [
    "DIAGNOSTICS", "SMOOTHING_SIGN", "FORM_KEYS", "DEFAULTS", "BOUNDS", "ss",
    "fill_widgets", "take_train_request", "draw_runs", "hyperparameter_widgets", "run_link_values",
]

DIAGNOSTICS = {k: figures.diagnostic_label(k) for k in ("dirichlet", "mad", "subspace_distance")}
# what over-smoothing looks like in each diagnostic's heatmap
SMOOTHING_SIGN = {"dirichlet": "the energy falling towards the top layers (neighbours become equal)",
                  "mad": "MAD falling towards 0 in the top layers (every node's vector points the "
                         "same way)",
                  "subspace_distance": "the distance falling towards the top layers (the vectors "
                                       "approach the over-smoothing subspace M)"}
# train_request keys -> this page's widgets (the rest override the sidebar, see below)
FORM_KEYS = {"backbone": "lt_backbone", "hidden": "lt_hidden", "dropout": "lt_dropout",
             "lr": "lt_lr", "weight_decay": "lt_wd", "epochs": "lt_epochs",
             "normalization": "lt_norm", "self_loop": "lt_loop", "batch_norm": "lt_bn",
             "alpha": "lt_alpha", "patience": "lt_patience", "diag_every": "lt_diag_every",
             "kernel": "lt_kernel", "directed": "lt_directed"}
DEFAULTS = {"lt_backbone": "gcn", "lt_mode": "depth recipe", "lt_hidden": 64, "lt_dropout": 0.5,
            "lt_lr": 0.01, "lt_wd": 5e-4, "lt_norm": "AN", "lt_alpha": 0.1, "lt_loop": False,
            "lt_bn": False, "lt_epochs": 100, "lt_patience": 100, "lt_diag_every": 10,
            "lt_kernel": "linear", "lt_directed": False}
BOUNDS = {"lt_hidden": (1, 1024), "lt_dropout": (0.0, 0.95), "lt_lr": (0.0, 1.0),
          "lt_wd": (0.0, 1.0), "lt_alpha": (0.0, 1.0), "lt_epochs": (1, 5000),
          "lt_patience": (0, 5000), "lt_diag_every": (0, 1000)}

ss = st.session_state


def fill_widgets(fields: dict, keep: set | frozenset = frozenset()) -> None:
    """Set the form's widgets from config fields, each within its widget's range (a
    widget refuses other values); widgets whose key is in ``keep`` (a link's values) stay."""
    for name, key in FORM_KEYS.items():
        if name in fields and key not in keep:
            ss[key] = _clamped(key, fields[name])


def _clamped(key: str, value):
    """``value`` within the widget ``key``'s range (a widget refuses other values)."""
    low, high = BOUNDS.get(key, (None, None))
    return value if low is None else type(DEFAULTS[key])(min(max(value, low), high))


def run_link_values(query: Mapping[str, str]) -> dict:
    """The session values of the run a ``?run=<id>`` link names (its latest run): its
    dataset and split (not an upload's: its files stay in the owner's browser), sampler,
    layers, keep rates and seed for the sidebar, every hyperparameter for the form
    ("custom"), and its exact point as ``lt_override`` where the sidebar's 0.05 grid
    would round its keep rates. Empty when the link names no run on this server.

    :func:`app_shared.browser_history.restore_url_state` puts them under the link's own values, so a link
    with only the id opens with the run's data and settings around its curves."""
    job = registry.REGISTRY.get(query.get(live_runs.RUN_PARAM), live_runs.KIND)
    runs = getattr(job, "runs", None)
    if not runs:
        return {}
    config = runs[-1].config
    rates = (links.snap(config.p_min), links.snap(config.p_max))
    values = {"sampler": config.sampler, "p_range": rates, "seed": config.seed, "lt_mode": "custom",
              "layers": min(max(config.num_layers, 1), links.APP_MAX_LAYERS)}
    if config.dataset != UPLOAD_DATASET:
        values.update(dataset=config.dataset, split=config.split)
    values.update({key: _clamped(key, getattr(config, name)) for name, key in FORM_KEYS.items()})
    if rates != (config.p_min, config.p_max) or values["layers"] != config.num_layers:
        values["lt_override"] = {k: getattr(config, k) for k in OVERRIDE_KEYS} | {
            "source": f"the linked run {runs[-1].label}", "dataset": config.dataset}
    return values


def take_train_request() -> None:
    """"Train this" on the Tuning page (:func:`dropedge_explorer.studies.tuned.train_request` in
    ``train_request``): pre-fill the form, take its point over the sidebar's
    (``lt_override``). A bad request is a message, not a traceback."""
    request = ss.pop("train_request", None)
    try:  # a request is checked like a run's settings: a bad one is a message, not a traceback
        if request:
            TrainConfig.from_dict({k: v for k, v in request.items() if k != "source"})
    except ConfigError as exc:
        st.error(f"Ignored the settings sent from the Tuning page: {exc}")
        request = None
    if request:
        fill_widgets(request)
        ss["lt_mode"] = "custom"
        ss["lt_override"] = {k: request[k] for k in OVERRIDE_KEYS if k in request} | {
            "source": request.get("source", "the Tuning page"), "dataset": request.get("dataset")}


def draw_runs(live: TrainingSession, diag_every: int) -> bool:
    """Poll the session's runs and draw them; ``True`` when a run started or ended (the
    page reruns so that its buttons follow)."""
    changes = live_runs.poll(live)
    if changes.started:
        ss["lt_focus_want"] = changes.started[-1].label
    if not live.runs:
        st.info("Start a run — or “Compare samplers” to train NoDrop, DropEdge and DropEdge++ "
                "one after another with the same seed and overlay them.")
        return changes.changed
    data = ", ".join(dict.fromkeys(live_runs.data_name(r.config) for r in live.runs))
    st.subheader(f"Runs on {data}")  # the runs' own data, whatever the sidebar shows now
    _status_line(live)
    runs = [r for r in live.runs if r.events]
    labels = {r.label: r.sampler for r in runs}
    seen = tuple((r.label, len(r.events)) for r in runs)  # figures are rebuilt only when these change
    if runs:  # none while the jobs only wait: a class of waiting pages drew empty charts
        st.plotly_chart(live.figure("curves", seen, lambda: figures.training_curves(
            {r.label: r.history for r in runs}, samplers=labels)), key="lt_curves")
    with_diag = [r for r in runs if r.diagnostics]
    if not with_diag:
        st.caption("Diagnostics (layer distances, Dirichlet energy, MEN) appear after the first "
                   f"{diag_every or '—'} epochs (every “Diagnostics every” epochs).")
    else:
        _diagnostic_views(live, with_diag, labels)
    _runs_table(live)
    return changes.changed


def _status_line(live: TrainingSession) -> None:
    """The running run's progress (its data named), or how the last run ended."""
    run = live.current
    if run is not None:
        gpu = run.device_memory_text()
        st.progress(min(run.epochs_done / run.config.epochs, 1.0),
                    text=f"Training {run.label} on {live_runs.data_name(run.config)} · "
                         f"{run.device or '…'}: {run.message}" + (f" · {gpu}" if gpu else "")
                         + (f" · {len(live.queued)} queued" if live.queued else ""))
        return
    place = live.place()
    if place is None and live.queued:  # its job has its place: the worker process is starting
        st.info(f"{live.queued[0].label} on {live_runs.data_name(live.queued[0].config)}: starting its "
                "worker process (a fresh Python loads torch first) …")
        return
    if place is not None:
        running = len(live.queue.running())
        st.info(f"Waiting for a free place: **{place}{_ordinal(place)} in line** ({running} of "
                f"{live.queue.max_running} places training; jobs take turns by owner). Stop takes "
                "it out of the line; closing this tab does not.")
        return
    last = live.runs[-1]
    box = {"finished": st.success, "early_stop": st.success, "stopped": st.warning}.get(
        last.status, st.error)
    pace = f", {last.epoch_time:.3f} s/epoch" if last.epoch_time is not None else ""
    gpu = last.device_memory_text()
    stored = " Stored in the results store." if last.stored_key else ""
    box(f"{last.label} on {live_runs.data_name(last.config)}: **{last.status.replace('_', ' ')}** — "
        f"{last.message} (device {last.device_name or '?'}{pace}{', ' + gpu if gpu else ''}).{stored}")


def _ordinal(n: int) -> str:
    return "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")


def _diagnostic_views(live: TrainingSession, with_diag: list, labels: dict) -> None:
    """The per-layer views of one run (heatmap, layer distances) and every run's MEN."""
    options = [r.label for r in reversed(with_diag)]
    if ss.get("lt_focus_want") in options:
        ss["lt_focus"] = ss.pop("lt_focus_want")
    elif ss.get("lt_focus") not in options:
        ss["lt_focus"] = options[0]
    c1, c2 = st.columns([1.3, 1])
    focus_label = c1.selectbox("Run for the per-layer views", options, key="lt_focus")
    key = c2.radio("Per-layer diagnostic", list(DIAGNOSTICS), key="lt_diag_key",
                   format_func=DIAGNOSTICS.get, horizontal=True)
    focus = next(r for r in with_diag if r.label == focus_label)
    diag_seen = tuple((r.label, len(r.diagnostics)) for r in with_diag)
    left, right = st.columns(2)
    with left:
        st.plotly_chart(live.figure("heatmap", (focus.label, key, len(focus.diagnostics)),
                                    lambda: figures.diagnostics_heatmap(focus.diagnostics, key=key)),
                        key="lt_heatmap")
        st.caption(f"{DIAGNOSTICS[key]} of each hidden layer's output over training "
                   f"({focus.label}), log colour scale. Over-smoothing shows as "
                   f"{SMOOTHING_SIGN[key]}.")
    with right:
        if any(d["layer_distances"] for d in focus.diagnostics):
            dist = live.figure("distances", diag_seen, lambda: (
                figures.layer_distance_curves(focus.diagnostics) if len(with_diag) == 1
                else figures.layer_distance_curves({r.label: r.diagnostics for r in with_diag},
                                                   samplers=labels)))
            st.plotly_chart(dist, key="lt_distances")
            st.caption("D⁽ˡ⁾ = ‖H⁽ˡ⁺¹⁾ − H⁽ˡ⁾‖_F between consecutive hidden layers; the "
                       "paper's Distance averages l = 1 … L−3. Near 0: the layers stopped "
                       "changing the representation (over-smoothing)."
                       + (" One line per run (average)." if len(with_diag) > 1 else ""))
        else:
            st.info("Layer distances need at least two hidden layers of the same width "
                    "(L ≥ 3).")
    st.plotly_chart(live.figure("men", diag_seen, lambda: figures.men_over_training(
        {r.label: r.diagnostics for r in with_diag}, samplers=labels)), key="lt_men")
    st.caption("MEN of the edges each epoch's sample kept, per run, on a linear axis from 0: "
               "NoDrop keeps all (flat, highest); DropEdge++/LID stay below DropEdge at equal "
               "keep rates; each sampler's line wobbles by a few percent from draw to draw. "
               "Two runs of one sampler: a darker or lighter shade and another dash.")


def _runs_table(live: TrainingSession) -> None:
    """One row per run of the session: status, epochs, accuracies, time, device; and
    every epoch of every run as a CSV download."""
    num = st.column_config.NumberColumn
    st.dataframe(runs_frame(live.runs), hide_index=True, placeholder="—",
                 column_order=["run", "dataset", "status", "epochs", "best_epoch", "best_val_acc", "test_acc",
                               "time_s", "epoch_s", "device", "p_min", "p_max", "message"],
                 column_config={"best_epoch": num("best epoch"),
                                "best_val_acc": num("best val", format="percent"),
                                "test_acc": num("test (at best val)", format="percent"),
                                "time_s": num("time (s)", format="%.1f"),
                                "epoch_s": num("s / epoch", format="%.3f"),
                                "p_min": num(format="%.3f"), "p_max": num(format="%.3f")})
    runs = list(live.runs)  # built on a click only (a deferred download): the page polls every second
    if not any(r.history for r in runs):  # a job still waiting for its worker: nothing to download yet
        return
    st.download_button("Download the runs' history (CSV)", lambda: history_frame(runs).to_csv(index=False),
                       file_name="live_training_history.csv", mime="text/csv", key="lt_download",
                       help="One row per run and epoch: losses and accuracies (fractions) as trained.")


def hyperparameter_widgets(fixed: bool, backbone: str, sampler: str) -> dict:
    """The form's hyperparameter widgets (locked when a recipe fixes them; epochs, patience
    and diagnostics stay editable), as config fields."""
    row = st.columns(6)
    hidden = row[0].number_input("Hidden width", *BOUNDS["lt_hidden"], key="lt_hidden", disabled=fixed)
    dropout = row[1].slider("Dropout", *BOUNDS["lt_dropout"], step=0.05, key="lt_dropout", disabled=fixed)
    lr = row[2].number_input("Learning rate", *BOUNDS["lt_lr"], step=0.001, format="%.4f", key="lt_lr",
                             disabled=fixed, help="Adam's step size (> 0).")
    wd = row[3].number_input("Weight decay", *BOUNDS["lt_wd"], step=1e-4, format="%.1e", key="lt_wd",
                             disabled=fixed)
    norm = row[4].selectbox("Normalisation", normalization.METHODS, key="lt_norm", disabled=fixed,
                            help="AN: D̃^-1/2 (A+I) D̃^-1/2 (GCN's); NA, FOG, ANS, ARW: the "
                                 "paper's other choices.")
    alpha = row[5].slider("α (APPNP*)", *BOUNDS["lt_alpha"], step=0.05, key="lt_alpha",
                          disabled=fixed or backbone != "appnp_star", help="Teleport back to Z0.")
    row = st.columns(6)
    loop = row[0].checkbox("Self-feature", key="lt_loop", disabled=fixed,
                           help="The self-feature term H·W_self (the paper's “Loop”).")
    bn = row[1].checkbox("Batch norm", key="lt_bn", disabled=fixed)
    epochs = row[2].number_input("Epochs", *BOUNDS["lt_epochs"], key="lt_epochs")
    patience = row[3].number_input("Patience", *BOUNDS["lt_patience"], key="lt_patience",
                                   help="Early stop after this many epochs without a better "
                                        "validation accuracy or loss (0: never).")
    diag_every = row[4].number_input("Diagnostics every", *BOUNDS["lt_diag_every"], key="lt_diag_every",
                                     help="Epochs between diagnostics (layer distances, Dirichlet "
                                          "energy, MEN); 0: none. On Cora one costs ~10 epochs.")
    weighted = samplers.NAMED[sampler][1] == "kernel"
    kernel = row[5].selectbox("Kernel", samplers.KERNELS, key="lt_kernel", disabled=not weighted,
                              help="The FD kernel of the weighted samplers (FD, DropEdge++): linear "
                                   "x_u·x_v, poly (x_u·x_v)², rbf exp(-6‖x_u−x_v‖²), reverse 1 − x_u·x_v.")
    directed = row[5].checkbox("Directed", key="lt_directed", disabled=sampler == "nodrop",
                               help="Sample the two directions of each edge separately (the authors' "
                                    "code); off: an edge is kept or dropped in both directions.")
    kernel, directed = sampler_options(sampler, kernel, directed)
    return dict(hidden=hidden, dropout=dropout, lr=lr, weight_decay=wd, normalization=norm, self_loop=loop,
                batch_norm=bn, alpha=alpha, epochs=epochs, patience=patience, diag_every=diag_every,
                kernel=kernel, directed=directed)
