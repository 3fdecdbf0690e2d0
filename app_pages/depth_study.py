"""Depth study: test accuracy vs depth per backbone, NoDrop vs DropEdge vs DropEdge++,
beside the paper's numbers.

Runs are looked up by their run key (the hash of the full config and seed) in the
results store (``$DROPEDGE_RESULTS`` or ``results/results.sqlite``) and in the run CSVs
bundled under ``assets/results/`` (:mod:`dropedge_core.studies.depth`), so a cached study
draws at once. "Run missing" trains the rest in this browser session's
:class:`app_shared.jobs.SweepJob` (one background thread, each finished run put into
the store, a watchdog that stops it once nobody polls); the fragment below polls it and
reruns the page whenever a run was stored, so the figure fills in as the runs finish.
"""
from __future__ import annotations

import streamlit as st

import app_shared as ui
from app_shared import jobs
from dropedge_core import datasets, figures, samplers
from dropedge_core.data import presets, reference
from dropedge_core.method.models import BACKBONES
from dropedge_core.store import ResultStore, StoreError
from dropedge_core.studies import depth as results
from dropedge_core.studies import ordering
from dropedge_core.training import TrainConfig, recipes

POLL_S = 0.7
ss = st.session_state


def _backbone_label(name: str) -> str:
    return figures.BACKBONE_LABELS.get(name, name)


@st.cache_resource(max_entries=8)
def _open_store(path: str) -> ResultStore:
    return ResultStore(path)


@st.cache_data(max_entries=8)
def _bundled(signature: tuple):
    """The bundled runs; ``signature`` (files, sizes, times) makes a changed folder a new entry."""
    return results.bundled_results()


@st.cache_data
def _paper():
    return reference.paper_accuracy_by_depth()


@st.cache_data(max_entries=16)
def _cached_settings(cached, dataset: str, split: str, kernel: str, directed: bool,
                     prefer: tuple[float, float]) -> list[dict]:
    return results.cached_settings(cached, dataset, split, kernel, directed, prefer)


def _use_settings(found: dict) -> None:
    """"Use the bundled settings": the page's (and the sidebar's) settings become those
    of the runs shown, so that they are the requested ones."""
    ss["ds_mode"] = found["mode"]
    if found["p_min"] is not None:
        ss["p_range"] = (found["p_min"], found["p_max"])
    ss["ds_epochs"] = found["epochs"] or 0
    ss["ds_kernel"], ss["ds_directed"] = found["kernel"], found["directed"]
    ss["ds_seeds"] = max(int(ss.get("ds_seeds", 3)), len(found["seeds"]))


def _job_state(job) -> tuple | None:
    """What the page was last drawn with: the fragment reruns the page when it changes."""
    return None if job is None else (id(job), job.over, job.done)


job: jobs.SweepJob | None = ss.get("ds_job")
running = job is not None and not job.done

sel = ui.selection()
offline = sel.dataset != ui.UPLOAD and datasets.availability(sel.dataset) == "download"
if offline:  # the bundled runs and the paper's numbers need no graph: the page goes on
    st.title("Depth study")
    graph = None
    st.info(f"**{sel.dataset}** is not on this machine (no DROPEDGE_DATA, not cached): the runs "
            "bundled with the app and the paper's numbers are shown, but “Run missing” needs the "
            "data. PyG downloads it when the machine is online; offline, set DROPEDGE_DATA to a "
            "directory in PyG's raw layout (see the README) and restart the app.")
else:
    graph = ui.page_header("Depth study", sel)
if sel.dataset == ui.UPLOAD:
    st.info("The Depth study is not available for an uploaded graph: it keeps its runs in the "
            "results store under the dataset's name, which your graph does not have. Compare "
            "samplers on your graph on the Live training page (“Compare samplers”), or from the "
            "command line: `python -m dropedge_core train --edges EDGES.csv --labels LABELS.csv "
            "--layers 8 --sampler dropedge++`.")
    st.stop()
st.markdown(
    "Does a deeper network learn better? Each extra graph convolution averages the "
    "features over one more hop, and the nodes' representations converge (**over-smoothing**). "
    "This page trains each backbone at several depths with and without edge dropping and "
    "plots the test accuracy (at the best-validation epoch), mean ± std over seeds. "
    "**What to look for** (the paper's finding): without dropping, GCN's accuracy falls "
    "with depth; DropEdge slows the fall, and DropEdge++ holds the accuracy up to deeper "
    "models. The residual, jumping-knowledge and teleport backbones (ResGCN, JKNet, APPNP*) "
    "fall less by construction — DropEdge++ still adds to them. Short runs are noisy and "
    "deep models need many epochs to train at all: read the trend over the depths, with "
    "several seeds.")

c = st.columns([0.9, 1.8, 1.8])
backbones = c[0].multiselect("Backbones", BACKBONES, default=["gcn"], key="ds_backbones",
                             format_func=_backbone_label,
                             help="One panel each: GCN, ResGCN, JKNet, APPNP*.")
depths = c[1].multiselect("Depths L", results.DEPTHS, default=list(results.DEPTHS), key="ds_depths",
                          help="Layers that aggregate over the graph (each gets its own sample).")
names = c[2].multiselect("Samplers", samplers.NAMES, default=list(results.STUDY_SAMPLERS),
                         key="ds_samplers", format_func=figures.sampler_label,
                         help="The paper compares NoDrop, DropEdge and DropEdge++ by depth.")
c = st.columns([0.7, 0.7, 1.3, 1.0, 3.0])
seeds = int(c[0].number_input("Seeds", 1, 20, 3, key="ds_seeds",
                              help="Seeds 0 … n−1 per cell: the mean ± std is over them."))
epochs = int(c[1].number_input("Epochs", 0, 5000, 0, key="ds_epochs",
                               help="Epochs per run; 0: the recipe's (the depth recipe: 200 up to "
                                    "L = 8, 300 up to 16, 400 beyond, early stopping after half)."))
epochs = epochs or None
mode = c[2].radio("Settings", results.MODES, key="ds_mode", horizontal=True,
                  help="depth recipe (default): settings that train at every depth — the usual GCN "
                       "settings up to L = 4, from L = 5 lr 0.001, no dropout, no weight decay, the "
                       "self-feature term on, more epochs (docs/REPRODUCTION.md says why). quick: "
                       "the shallow settings at every depth (deep GCNs sit at chance with them). "
                       "quick + batch norm: the same with batch normalisation after every hidden "
                       "layer. paper preset: the paper's best hyperparameters for the dataset, split "
                       "and backbone (their keep rates too), used at every depth — tuned for one "
                       "depth, they may not train at others.")
kernel = c[3].selectbox("Kernel", samplers.KERNELS, key="ds_kernel",
                        help="The FD kernel of the weighted samplers (FD, DropEdge++): linear "
                             "x_u·x_v, poly (x_u·x_v)², rbf exp(-6‖x_u−x_v‖²), reverse 1 − x_u·x_v. "
                             "Part of every run's key: other than linear, every run is a new one.")
directed = c[3].checkbox("Directed", key="ds_directed",
                         help="Sample the two directions of each edge separately (the authors' "
                              "code); off: an edge is kept or dropped in both directions.")
if not backbones or not depths or not names:
    st.info("Pick at least one backbone, one depth and one sampler.")
    st.stop()

settings = {b: results.study_settings(sel.dataset, sel.split, b, mode, sel.p_min, sel.p_max)
            for b in backbones}


def _recipe_line(backbone: str, fields: dict, recipe: str) -> str:
    """What one backbone's runs use, in words, at the shallowest and deepest depth asked for."""
    shown = sorted({min(depths), max(depths)})
    parts = []
    for L in shown:
        c = TrainConfig(dataset=sel.dataset, split=sel.split, backbone=backbone, num_layers=L, **fields)
        parts.append(f"L = {L}: {recipes.describe(c.to_dict())}, keep rates {c.p_min:.2f} → {c.p_max:.2f}")
    head = (f"the paper preset (tuned for L = "
            f"{presets.paper_preset(sel.dataset, sel.split, backbone)['num_layers']})" if recipe == "paper"
            else f"the {recipe} recipe")
    return f"**{_backbone_label(backbone)}**: {head} — " + "; ".join(parts)


lines = [_recipe_line(b, fields, recipe) for b, (fields, recipe) in settings.items()]
if mode == "paper preset" and any(recipe != "paper" for _, recipe in settings.values()):
    lines.append(f"(the paper has no preset here for {sel.dataset}/{sel.split}: the depth recipe, "
                 "keep rates from the sidebar)")
c[4].caption("  \n".join(lines) + ("" if epochs is None else f"  \n{epochs} epochs per run.")
             + f"  \nTraining on {jobs.device_label()}. The sidebar's sampler and layers are not used here.")

# --- what is requested, what is cached ------------------------------------------------
store, store_error = None, None
try:
    store = _open_store(str(results.store_path()))
    store_df = results.store_runs(store)
except StoreError as exc:  # not our store, damaged, a server that refuses: one line, no "Run missing"
    store, store_error, store_df = None, str(exc), results.empty_runs()
    st.error(f"Results store: {store_error}")
try:
    bundled_df = _bundled(results.bundled_signature())
except results.ResultsError as exc:
    st.warning(f"Bundled results ignored: {exc}")
    bundled_df = results.empty_runs()
cached = results.cached_runs(store_df, bundled_df)
configs = results.depth_configs(sel.dataset, sel.split, backbones, depths, names, seeds, epochs,
                                mode=mode, p_min=sel.p_min, p_max=sel.p_max, kernel=kernel,
                                directed=directed)
runs = results.requested_runs(configs, cached)
counts = runs["source"].value_counts()
missing = [cfg for cfg, source in zip(configs, runs["source"]) if source == "missing"]
paper_here = results.paper_rows(_paper(), sel.dataset, sel.split, backbones, names, depths)
table = results.depth_table(runs, paper_here)

b = st.columns([1.6, 0.8, 5])
start = b[0].button(f"Run missing ({len(missing)})", type="primary", key="ds_run",
                    disabled=running or not missing or store is None or graph is None,
                    help="Train the missing runs one after another in the background, each "
                         "stored as soon as it finishes (never redone)."
                         + (f" Needs {sel.dataset} on this machine." if graph is None else ""))
if b[1].button("Stop", key="ds_stop", disabled=not running,
               help="Stop the running sweep; the run in progress is not stored."):
    job.stop()
b[2].caption(
    f"{len(configs)} runs requested ({len(backbones)} backbone(s) × {len(depths)} depth(s) × "
    f"{len(names)} sampler(s) × {seeds} seed(s)): **{counts.get('store', 0)} from the results "
    f"store**, **{counts.get('bundled', 0)} bundled with the app**, **{len(missing)} missing**. "
    + (f"Store: `{store.path}`." if store is not None else
       f"The results store cannot be opened ({store_error}): only bundled runs are shown."))
if start and missing:
    ss["ds_job"] = job = jobs.SweepJob(missing, store, graph=graph)
    st.rerun()
ss["ds_seen"] = _job_state(job)


@st.fragment(run_every=POLL_S if running else None)
def show_job() -> None:
    """Poll this session's sweep; rerun the page when a run was stored or the sweep ended
    (the figure, the table and the buttons follow)."""
    current: jobs.SweepJob | None = ss.get("ds_job")
    if current is None:
        return
    current.heartbeat()
    where = f"{current.configs[0].dataset}/{current.configs[0].split}" if current.configs else ""
    if not current.done:
        st.progress(current.progress, text=f"Sweep on {where}: {current.status}")
    else:
        stopped = current.stopping or (current.watchdog is not None and current.watchdog.fired)
        box = (st.error if current.error else st.warning if stopped or current.failures
               else st.success)
        box(f"Sweep on {where}: {current.status}.")
    if _job_state(current) != ss.get("ds_seen"):
        st.rerun()


show_job()

# --- the figure and the table ---------------------------------------------------------
measured = runs[(runs["source"] != "missing") & runs["test_acc"].notna()]
has_paper_data = _paper()["dataset_key"].eq(sel.dataset).any()
fallback, note = None, None
if measured.empty:  # never an empty chart while runs of this dataset/split exist
    fallback = results.nearest_settings(
        _cached_settings(cached, sel.dataset, sel.split, kernel, directed, (sel.p_min, sel.p_max)),
        backbones, mode, sel.p_min, sel.p_max, epochs, kernel, directed)
if fallback is not None:
    alt = cached[cached["key"].isin(set(fallback["keys"]))]
    narrowed = alt[alt["backbone"].isin(backbones) & alt["sampler"].isin(names)
                   & alt["layers"].isin(depths)]
    measured = narrowed if len(narrowed) else alt
    shown_backbones = backbones if len(narrowed) else fallback["backbones"]
    if not len(narrowed):
        paper_here = results.paper_rows(_paper(), sel.dataset, sel.split, shown_backbones, names,
                                        sorted(set(depths) | set(fallback["layers"])))
    table = results.depth_table(measured, paper_here)
    where = " and ".join(f"{n} {'bundled with the app' if k == 'bundled' else 'from the results store'}"
                         for k, n in fallback["sources"].items())
    note = f"nearest cached settings: {results.describe_settings(fallback)}"
    w1, w2 = st.columns([5, 1.3])
    w1.warning(f"**No runs for these settings yet** ({len(missing)} missing). **Shown instead: the "
               f"nearest settings with runs — {results.describe_settings(fallback)}** "
               f"({fallback['runs']} runs: {where}"
               + ("" if len(narrowed) else "; other backbones, samplers or depths than those picked")
               + "). Their settings differ from the ones above; “Use the bundled settings” picks them.")
    w2.button("Use the bundled settings", key="ds_use_bundled", type="primary",
              on_click=_use_settings, args=(fallback,),
              help="Set the settings mode, the sidebar's keep rates, the epochs, the kernel and "
                   "the direction to those of the runs shown.")
else:
    shown_backbones = backbones
if measured.empty and paper_here.empty:
    st.info(f"Nothing measured for these settings yet, and the paper reports accuracy by depth "
            f"for {', '.join(sorted(_paper()['dataset'].unique()))} only. “Run missing” trains "
            f"the {len(missing)} runs; the figure fills in as they finish.")
else:
    st.plotly_chart(figures.accuracy_vs_depth(measured, paper_here, sel.dataset, sel.split,
                                              backbones=shown_backbones, note=note), key="ds_figure")
    partial = int((table["status"] != "measured").sum())
    st.caption(
        ("**Solid lines**: measured here — mean over the seeds with a run, error bars ± one "
         "standard deviation (hover a point for the count); the samplers are set a little "
         "apart at each depth so that their points do not hide each other. " if len(measured) else
         "Nothing measured for these settings yet: “Run missing” trains the runs. ")
        + (f"**Measured with other settings than those asked for** ({note}). " if note else "")
        + ("**Dashed lines, open circles**: the paper's numbers (its accuracy-by-depth table, "
           f"{sel.split} split) — compare the trend more than single points. " if len(paper_here) else
           (f"The paper has no numbers for the {sel.split} split of {sel.dataset}. "
            if has_paper_data else f"The paper reports no numbers for {sel.dataset}. "))
        + (f"**{partial} cell(s) not (fully) measured**: no point, or fewer seeds — see the table."
           if partial else "Every requested cell is measured." if note is None else ""))
    verdicts = [(b, ordering.leader_sentence(measured[measured["backbone"] == b])) for b in shown_backbones]
    verdicts = [(b, v) for b, v in verdicts if v]
    if verdicts:  # the paper's claim, said plainly for what is drawn
        st.markdown("**Does DropEdge++ lead?** " + " ".join(
            f"{_backbone_label(b)}: {v}" for b, v in verdicts)
            + " The paired test over seeds per depth, and why the paper's margins may not appear, "
              "are in `docs/REPRODUCTION.md` (section 1).")
    gaps = results.paper_gaps(table)
    if len(gaps):
        worst = gaps.iloc[0]
        st.warning(
            f"**Measured and paper differ by more than {results.PAPER_GAP * 100:.0f} points** in "
            f"{len(gaps)} of {int(table['paper_test_acc'].notna().sum())} cells with a paper number "
            f"(largest: {_backbone_label(worst['backbone'])} · {figures.sampler_label(worst['sampler'])} "
            f"· L = {worst['layers']}: measured {worst['test_acc_mean']:.1%}, paper "
            f"{worst['paper_test_acc']:.1%}). What we found about each gap is in "
            "`docs/REPRODUCTION.md` (below).")
        with st.expander("Why measured and paper differ (docs/REPRODUCTION.md)"):
            st.markdown(results.reproduction_notes())

st.subheader("Accuracy per cell")
num = st.column_config.NumberColumn
percent = ["test_acc_mean", "test_acc_std", "paper_test_acc", "diff_vs_paper"]
shown = table.assign(backbone=table["backbone"].map(_backbone_label),
                     sampler=table["sampler"].map(figures.sampler_label),
                     **{c: table[c] * 100 for c in percent})
order = ["backbone", "sampler", "layers", "status", "test_acc_mean", "test_acc_std", "n", "missing",
         "n_store", "n_bundled"] + (["paper_test_acc", "diff_vs_paper"] if len(paper_here) else [])
st.dataframe(
    shown, hide_index=True, height=min(35 * (len(shown) + 1) + 3, 35 * 25), column_order=order,
    column_config={"layers": num("L"),
                   "status": st.column_config.TextColumn(
                       "status", help="measured: every requested seed; partial: some seeds "
                                      "missing; missing: no run yet"),
                   "test_acc_mean": num("test acc (%)", format="%.1f",
                                        help="Mean test accuracy over the seeds run."),
                   "test_acc_std": num("± std", format="%.1f",
                                       help="Sample standard deviation over the seeds (2 or more)."),
                   "n": num("runs", help="Runs with a test accuracy (seeds)."),
                   "missing": num("missing", help="Requested runs not made yet."),
                   "n_store": num("from store"), "n_bundled": num("bundled"),
                   "paper_test_acc": num("paper (%)", format="%.1f",
                                         help="The paper's accuracy-by-depth table (empty: no number)."),
                   "diff_vs_paper": num("measured − paper", format="%+.1f",
                                        help="In percentage points.")})
others = results.other_runs(cached, runs, sel.dataset, sel.split)
st.caption("Measured cells come from the results store or from the runs bundled with the app "
           "(`assets/results/*.csv`), matched by the hash of the full run settings; the paper's "
           "column is the published number."
           + (f" {others} other run(s) of {sel.dataset}/{sel.split} made with other settings "
              "(epochs, preset, keep rates, depths or seeds) are not shown." if others else ""))
st.download_button("Download this table (CSV)", table.to_csv(index=False),
                   file_name=f"depth_study_{sel.dataset}_{sel.split}.csv", mime="text/csv",
                   key="ds_download", help="Accuracies as fractions in [0, 1].")

with st.expander("Runs, one row per seed"):
    st.dataframe(runs.assign(test_acc=runs["test_acc"] * 100, best_val_acc=runs["best_val_acc"] * 100),
                 hide_index=True,
                 column_config={"test_acc": num("test acc (%)", format="%.1f"),
                                "best_val_acc": num("best val acc (%)", format="%.1f"),
                                "epochs_run": num("epochs run"),
                                "key": st.column_config.TextColumn("run key", width="small")})
    done = runs[runs["source"] != "missing"].drop(columns="source")
    st.download_button("Download these runs (run CSV format)", done.to_csv(index=False),
                       file_name=f"runs_{sel.dataset}_{sel.split}.csv", mime="text/csv",
                       key="ds_download_runs",
                       help="The format of assets/results/*.csv: put the file there to bundle "
                            "the runs with the app.")

with st.expander("The same runs from the command line"):
    st.code("\n".join(results.sweep_commands(sel.dataset, sel.split, backbones, depths, names, seeds,
                                             epochs, mode=mode, p_min=sel.p_min, p_max=sel.p_max,
                                             store=results.store_path(), kernel=kernel,
                                             directed=directed)),
            language="bash",
            wrap_lines=True)
    st.caption("A sweep stores each run under the same key as this page, so its runs show here "
               "(and an interrupted sweep resumes). `dropedge_core.studies.depth.export_runs(store, "
               "path)` writes them in the run CSV format for `assets/results/`.")
