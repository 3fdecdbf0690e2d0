"""Depth study: test accuracy vs depth per backbone, NoDrop vs DropEdge vs DropEdge++,
beside the paper's numbers.

Runs are looked up by their run key in the results store (``$DROPEDGE_RESULTS`` or
``results/results.sqlite``; Live training runs land there too) and in the run CSVs bundled
under ``dropedge_explorer/assets/results/``;
:func:`dropedge_explorer.studies.depth_view.depth_view` builds the whole view. "Run missing"
trains the rest in this session's sweep job (:mod:`app_shared.depth_page`), and the page
redraws as each run is stored.
"""
from __future__ import annotations

import streamlit as st
from dropedge_core import datasets

import app_shared as ui
from app_shared import depth_page as dv
from dropedge_explorer import figures, paths
from dropedge_explorer.data import reference
from dropedge_explorer.jobs.live import device_label
from dropedge_explorer.locations import LocationError
from dropedge_explorer.store import ResultStore, StoreError
from dropedge_explorer.studies import depth, own_runs
from dropedge_explorer.studies import run_tables as runs
from dropedge_explorer.studies.depth_view import depth_view


@st.cache_resource(max_entries=8)
def _open_store(path: str) -> ResultStore:
    return ResultStore(path)


@st.cache_data(max_entries=8)
def _bundled(signature: tuple):
    """The bundled runs; ``signature`` (files, sizes, times) makes a changed folder a new entry."""
    return runs.bundled_results()


@st.cache_data
def _paper():
    return reference.paper_accuracy_by_depth()


@st.cache_data(max_entries=16)
def _cached_settings(cached, dataset, split, kernel, directed, prefer) -> list[dict]:
    return depth.cached_settings(cached, dataset, split, kernel, directed, prefer)


sel = ui.selection()
if sel.dataset != ui.UPLOAD and datasets.availability(sel.dataset) == "download":
    st.title("Depth study")  # the bundled runs and the paper's numbers need no graph: the page goes on
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
    "plots the test accuracy (at the best-validation epoch), mean ± std over seeds, beside the "
    "paper's numbers; under the figure, the paper's claim and what the runs drawn show, each "
    "comparison a paired test over seeds. Short runs are noisy and deep models need many epochs "
    "to train at all: read the trend over the depths, with several seeds.")
store, store_error, store_df = None, None, runs.empty_runs()
try:
    store = _open_store(str(paths.results_store()))
    store_df = runs.store_runs(store)
except (StoreError, LocationError) as exc:  # bad $DROPEDGE_RESULTS, not ours, a refusing server: one line
    store, store_error = None, str(exc)
    st.error(f"Results store: {ui.private(store_error)}")
try:
    bundled_df = _bundled(runs.bundled_signature())
except runs.ResultsError as exc:
    st.warning(f"Bundled results ignored: {exc}")
    bundled_df = runs.empty_runs()
cached = runs.cached_runs(store_df, bundled_df)
dv.bundled_offer(cached, sel.dataset)
# the Seeds box opens on every cached seed of the cells the widgets ask for (their last values,
# else their defaults), so that the verdicts are docs/REPRODUCTION.md's, which uses them all
req, recipe_col = dv.request_widgets(dv.default_seeds(sel.dataset, sel.split, cached, sel.p_min, sel.p_max))
if not req.backbones or not req.depths or not req.samplers:
    st.info("Pick at least one backbone, one depth and one sampler.")
    st.stop()
view = depth_view(sel.dataset, sel.split, req.backbones, req.depths, req.samplers, req.seeds,
                        req.epochs, req.mode, sel.p_min, sel.p_max, req.kernel, req.directed,
                        cached, _paper(), _cached_settings)
recipe_col.caption("  \n".join(f"**{dv.backbone_label(b)}**: {line}" for b, line in view.recipes.items())
                   + (f"  \n(the paper has no preset here for {sel.dataset}/{sel.split}: the depth "
                      "recipe, keep rates from the sidebar)" if view.preset_missing else "")
                   + ("" if req.epochs is None else f"  \n{req.epochs} epochs per run.")
                   + f"  \nTraining on {device_label()}. The sidebar's sampler and layers are "
                   "not used here.")
dv.sweep_controls(view, req, store, store_error, graph, sel.dataset)
dv.own_runs_notice(own_runs.own_runs(cached, {*view.runs["key"], *view.measured["key"]}, sel.dataset,
                                     sel.split, _cached_settings), req)

if view.fallback is not None:
    dv.fallback_warning(view)
if view.measured.empty and view.paper.empty:
    st.info(f"Nothing measured for these settings yet, and the paper reports accuracy by depth "
            f"for {', '.join(sorted(_paper()['dataset'].unique()))} only. “Run missing” trains "
            f"the {len(view.missing)} runs; the figure fills in as they finish.")
else:
    st.plotly_chart(figures.accuracy_vs_depth(view.measured, view.paper, sel.dataset, sel.split,
                                              backbones=view.backbones, note=view.note), key="ds_figure")
    dv.figure_notes(view, sel.dataset, sel.split, _paper()["dataset_key"].eq(sel.dataset).any())

st.subheader("Accuracy per cell")
dv.cell_table(view)
st.caption("Measured cells come from the results store or from the runs bundled with the app "
           "(`dropedge_explorer/assets/results/*.csv`), matched by the hash of the full run settings; "
           "the paper's column is the published number."
           + (f" {view.others} other run(s) of {sel.dataset}/{sel.split} made with other settings "
              "(epochs, preset, keep rates, depths or seeds) are not shown." if view.others else ""))
st.download_button("Download this table (CSV)", view.table.to_csv(index=False),
                   file_name=f"depth_study_{sel.dataset}_{sel.split}.csv", mime="text/csv",
                   key="ds_download", help="Accuracies as fractions in [0, 1].")
with st.expander("Paired tests behind “Does DropEdge++ lead?” (Holm-corrected)"):
    dv.lead_tests_table(view)
with st.expander("Runs, one row per seed"):
    dv.run_rows(view, sel.dataset, sel.split)
with st.expander("The same runs from the command line"):
    st.code("\n".join(depth.sweep_commands(sel.dataset, sel.split, req.backbones, req.depths, req.samplers,
                                           req.seeds, req.epochs, mode=req.mode, p_min=sel.p_min,
                                           p_max=sel.p_max, kernel=req.kernel, directed=req.directed,
                                           store=None)),  # the server's store: its path stays private
            language="bash", wrap_lines=True)
    st.caption("Run them where the app runs, with its DROPEDGE_RESULTS. "
               "A sweep stores each run under the same key as this page, so its runs show here "
               "(and an interrupted sweep resumes). `python -m dropedge_core export runs.csv` writes "
               "them in the run CSV format for `dropedge_explorer/assets/results/`.")
