"""The Depth study page's app-only parts: its settings widgets, the "Use the bundled
settings" hand-off, the sweep job's buttons and polling fragment, and the tables.

The view itself (which runs, which are cached, the table, the fallback) is one call,
:func:`dropedge_explorer.studies.depth_view.depth_view`; nothing here computes it.
"""
from __future__ import annotations

from dataclasses import dataclass

import streamlit as st
from dropedge_core import samplers
from dropedge_core.models import BACKBONES

from app_shared import job_links
from app_shared.text import private, store_label
from dropedge_explorer import env, figures
from dropedge_explorer.jobs.handles import SweepJob
from dropedge_explorer.jobs.live import server_queue
from dropedge_explorer.store import ResultStore
from dropedge_explorer.studies import depth
from dropedge_explorer.studies.cells import PAPER_GAP, reproduction_notes
from dropedge_explorer.studies.depth_view import PAPER_CLAIM, DepthView
from dropedge_explorer.studies.own_runs import OwnRuns, request_for

__all__ = [
    "POLL_S", "ss", "default_seeds", "backbone_label", "DepthRequest", "request_widgets", "use_settings",
    "show_mine",
    "own_runs_notice", "sweep_controls", "cell_table", "lead_tests_table", "run_rows",
    "bundled_offer", "fallback_warning", "figure_notes",
]

POLL_S = 1.0  # a sweep waiting in line is looked at less often (SweepJob.refresh_every)
PAGE, SWEEP_PARAM = "depth_study", "sweep"
ss = st.session_state


def default_seeds(dataset: str, split: str, cached, p_min: float, p_max: float) -> int:
    """:func:`depth.default_seeds` for the request the widgets hold (their defaults before the
    first run)."""
    ss = st.session_state
    try:
        return depth.default_seeds(dataset, split, ss.get("ds_backbones", ["gcn"]),
                                   ss.get("ds_depths", list(depth.DEPTHS)),
                                   ss.get("ds_samplers", list(depth.STUDY_SAMPLERS)), cached,
                                   ss.get("ds_mode", depth.MODES[0]), p_min, p_max,
                                   ss.get("ds_kernel", "linear"), bool(ss.get("ds_directed", False)))
    except ValueError:  # a request the widgets will refuse anyway (e.g. nothing picked)
        return depth.FEWEST_DEFAULT_SEEDS


def backbone_label(name: str) -> str:
    return figures.BACKBONE_LABELS.get(name, name)


@dataclass(frozen=True)
class DepthRequest:
    """What the page's widgets ask for (the sidebar's dataset, split and keep rates aside)."""
    backbones: list
    depths: list
    samplers: list
    seeds: int
    epochs: int | None
    mode: str
    kernel: str
    directed: bool


def request_widgets(default_seeds: int = depth.FEWEST_DEFAULT_SEEDS) -> tuple[DepthRequest, object]:
    """The page's settings widgets; returns the request and the column for the recipe caption.
    ``default_seeds``: the "Seeds" box's default (:func:`dropedge_explorer.studies.depth.default_seeds`:
    every cached seed of the requested cells)."""
    # a multiselect keeps its chips on one line: the depths' six and the three samplers' need
    # half the page each (in three columns at 1280 px, "64" and "DropEdge++" hid under the
    # clear icon); the backbones (one chip by default) open the next row
    c = st.columns(2)
    depths = c[0].multiselect("Depths L", depth.DEPTHS, default=list(depth.DEPTHS), key="ds_depths",
                              help="Layers that aggregate over the graph (each gets its own sample).")
    names = c[1].multiselect("Samplers", samplers.NAMES, default=list(depth.STUDY_SAMPLERS),
                             key="ds_samplers", format_func=figures.sampler_label,
                             help="The paper compares NoDrop, DropEdge and DropEdge++ by depth.")
    c = st.columns([1.2, 0.6, 0.6, 1.3, 1.0])
    backbones = c[0].multiselect("Backbones", BACKBONES, default=["gcn"], key="ds_backbones",
                                 format_func=backbone_label,
                                 help="One panel each: GCN, ResGCN, JKNet, APPNP*.")
    c = c[1:] + [st.container()]  # seeds, epochs, settings, kernel; the recipe caption below
    seeds = int(c[0].number_input("Seeds", 1, depth.MOST_SEEDS, default_seeds, key="ds_seeds",
                                  help="Seeds 0 … n−1 per cell: the mean ± std is over them. Opens on "
                                       "every bundled or stored seed of the cells asked for (as "
                                       "docs/REPRODUCTION.md uses them)."))
    epochs = int(c[1].number_input("Epochs", 0, 5000, 0, key="ds_epochs",
                                   help="Epochs per run; 0: the recipe's (the depth recipe: 200 up to "
                                        "L = 8, 300 up to 16, 400 beyond, early stopping after half)."))
    mode = c[2].radio("Settings", depth.MODES, key="ds_mode", horizontal=True,
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
    return DepthRequest(backbones, depths, names, seeds, epochs or None, mode, kernel, directed), c[4]


def use_settings(found: dict) -> None:
    """"Use the bundled settings": the page's (and the sidebar's) settings become those
    of the runs shown, so that they are the requested ones."""
    ss["ds_mode"] = found["mode"]
    if found["p_min"] is not None:
        ss["p_range"] = (found["p_min"], found["p_max"])
    ss["ds_epochs"] = found["epochs"] or 0
    ss["ds_kernel"], ss["ds_directed"] = found["kernel"], found["directed"]
    ss["ds_seeds"] = max(int(ss.get("ds_seeds", 3)), len(found["seeds"]))


def show_mine(settings: dict, req: DepthRequest) -> None:
    """"Show my runs": the page's settings become those of the user's runs (the picked
    backbones, depths and samplers widened by theirs, enough seeds)."""
    want = request_for(settings, req.backbones, req.depths, req.samplers, req.seeds)
    ss["ds_mode"], ss["ds_epochs"] = want["mode"], want["epochs"] or 0
    if want["p_min"] is not None:
        ss["p_range"] = (want["p_min"], want["p_max"])
    ss["ds_kernel"], ss["ds_directed"] = want["kernel"], want["directed"]
    ss["ds_backbones"], ss["ds_depths"] = want["backbones"], want["depths"]
    ss["ds_samplers"], ss["ds_seeds"] = want["samplers"], want["seeds"]


def own_runs_notice(own: OwnRuns | None, req: DepthRequest) -> None:
    """One line on the user's runs the view leaves out, and the offer to show them: a
    button that switches the view, or (settings the page cannot ask for) their list."""
    if own is None:
        return
    w1, w2 = st.columns([5, 1.3])
    w1.info(own.line)
    if own.settings is not None:
        w2.button("Show my runs", key="ds_show_mine", on_click=show_mine, args=(own.settings, req),
                  help="Set the settings mode, keep rates, epochs, kernel, direction, backbones, "
                       "depths, samplers and seeds so that these runs are in the view.")
    elif w2.toggle("Show my runs", key="ds_list_mine"):
        st.dataframe(own.runs.assign(test_acc=own.runs["test_acc"] * 100), hide_index=True, placeholder="—",
                     key="ds_mine_table",
                     column_config={"test_acc": st.column_config.NumberColumn("test acc (%)", format="%.1f")})


def _job_state(job) -> tuple | None:
    """What the page was last drawn with: the fragment reruns the page when it changes."""
    return None if job is None else (id(job), job.over, job.done)


def sweep_controls(view: DepthView, req: DepthRequest, store: ResultStore | None,
                   store_error: str | None, graph, dataset: str) -> None:
    """"Run missing" / "Stop", the counts, and the fragment that polls this page's sweep
    (:class:`dropedge_explorer.jobs.handles.SweepJob`: a job of the server's queue, trained
    in a worker process) and reruns the page whenever a run was stored.

    The sweep outlives the browser tab: its id is in the URL (``?sweep=``), so a reloaded
    page shows it again (:mod:`app_shared.job_links`)."""
    found = job_links.from_url(PAGE, SWEEP_PARAM, "sweep", "sweep")
    if found is not None:
        ss["ds_job"] = found
    job: SweepJob | None = ss.get("ds_job")
    running = job is not None and not job.done
    mine = job_links.controls(PAGE)  # another session's sweep (its link): watched, no Stop
    missing, counts = view.missing, view.counts
    b = st.columns([1.6, 0.8, 5])
    start = b[0].button(f"Run missing ({len(missing)})", type="primary", key="ds_run",
                        disabled=running or not missing or store is None or graph is None,
                        help="Train the missing runs one after another in a worker process of the "
                             "server (in line with the other jobs), each stored as soon as it "
                             "finishes (never redone)."
                             + (f" Needs {dataset} on this machine." if graph is None else ""))
    if mine and b[1].button("Stop", key="ds_stop", disabled=not running,
                            help="Stop the running sweep; the run in progress is not stored."):
        job.stop()
    if not mine:
        b[1].caption("read-only")
        st.info("You are watching the sweep of another browser session, read-only: its progress, "
                "no Stop. “Run missing” starts a sweep of your own once it ended.")
    else:
        job_links.owner_note(PAGE, "sweep")
    b[2].caption(
        f"{len(view.configs)} runs requested ({len(req.backbones)} backbone(s) × {len(req.depths)} "
        f"depth(s) × {len(req.samplers)} sampler(s) × {req.seeds} seed(s)): **{counts['store']} from "
        "the results "
        f"store**, **{counts['bundled']} bundled with the app**, **{len(missing)} missing**. "
        + (f"Store: {store_label(store.path)} on the server." if store is not None else
           f"The results store cannot be opened ({private(store_error)}): only bundled runs are shown."))
    together = st.checkbox("Train a cell's seeds together", key="ds_batch", disabled=running,
                           help="“Run missing” trains the missing seeds of each cell as one batched "
                                "model, each seed stored as its own run would be (the same masks, "
                                "weights and selected epoch). Faster on a GPU, about the same on a CPU "
                                "(a small graph's GPU epoch is mostly kernel launches, which the batch "
                                "shares: expected, not yet measured; CPU measured in docs/PERFORMANCE.md).")
    if start and missing:
        new = SweepJob(missing, server_queue, graph=graph, batch_seeds=together)
        if job_links.register(new, "sweep", PAGE, SWEEP_PARAM):
            try:
                ss["ds_job"] = new.start(owner=job_links.shown_id(PAGE))
            except env.EnvError as exc:  # DROPEDGE_MAX_WORKERS: one line
                st.error(f"Cannot start: {exc}")
            else:
                st.rerun()
    ss["ds_seen"] = _job_state(job)
    st.fragment(_show_job, run_every=job.refresh_every(POLL_S) if job is not None else None)()


def _show_job() -> None:
    """The sweep's progress (or how it ended); reruns the page when a run was stored."""
    current: SweepJob | None = ss.get("ds_job")
    if current is None:
        return
    where = f"{current.configs[0].dataset}/{current.configs[0].split}" if current.configs else ""
    if not current.done:
        st.progress(current.progress, text=f"Sweep on {where}: {current.status}")
    else:
        warn = current.stopped or current.failures
        box = st.error if current.error else st.warning if warn else st.success
        box(f"Sweep on {where}: {current.status}.")
    if _job_state(current) != ss.get("ds_seen"):
        st.rerun()


def cell_table(view: DepthView) -> None:
    """The per-cell table (percent), with its column help."""
    table, num = view.table, st.column_config.NumberColumn
    percent = ["test_acc_mean", "test_acc_std", "paper_test_acc", "diff_vs_paper"]
    shown = table.assign(backbone=table["backbone"].map(backbone_label),
                         sampler=table["sampler"].map(figures.sampler_label),
                         **{c: table[c] * 100 for c in percent if c in table})
    order = ["backbone", "sampler", "layers", "status", "test_acc_mean", "test_acc_std", "n", "missing",
             "n_store", "n_bundled"] + (["paper_test_acc", "diff_vs_paper"] if len(view.paper) else [])
    st.dataframe(
        shown, hide_index=True, placeholder="—", height=min(35 * (len(shown) + 1) + 3, 35 * 25),
        column_order=order,
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


def lead_tests_table(view: DepthView) -> None:
    """The paired tests behind "Does DropEdge++ lead?": per backbone and depth, DropEdge++
    against each other sampler, the mean difference with its 95% interval, the p-value and
    its Holm correction over the claim's family (DropEdge++ vs that sampler at every depth
    drawn of the backbone; points, not fractions)."""
    tests, num = view.lead_tests, st.column_config.NumberColumn
    if tests is None or tests.empty:
        st.caption("No paired test: DropEdge++ and another sampler share no seeds at any depth drawn.")
        return
    shown = tests.assign(backbone=tests["backbone"].map(backbone_label),
                         worse=tests["worse"].map(figures.sampler_label),
                         **{c: tests[c] * 100 for c in ("diff_mean", "ci_low", "ci_high")})
    st.dataframe(shown, hide_index=True, placeholder="—", key="ds_lead_tests", column_order=[
        "backbone", "layers", "worse", "diff_mean", "ci_low", "ci_high", "n", "p_value", "p_holm", "verdict",
        "family"], column_config={
        "layers": num("L"), "worse": st.column_config.TextColumn("DropEdge++ vs"),
        "diff_mean": num("difference (points)", format="%+.1f",
                         help="Mean over the seeds both ran of DropEdge++ minus the other sampler."),
        "ci_low": num("95% CI from", format="%+.1f"), "ci_high": num("to", format="%+.1f"),
        "n": num("seeds", help="Seeds both samplers ran (paired by seed)."),
        "p_value": num("p", format="%.3f", help="Two-sided paired t-test, uncorrected."),
        "p_holm": num("Holm p", format="%.3f", help="Holm-corrected over the family (last column)."),
        "verdict": st.column_config.TextColumn(
            "verdict", help="shown / reversed: the Holm-corrected test rejects (α = 0.05) with "
                            "DropEdge++ ahead / behind; not shown: it does not (not the same as equal)."),
        "family": st.column_config.TextColumn("family")})


def run_rows(view: DepthView, dataset: str, split: str) -> None:
    """The requested runs, one row per seed, and their download in the run CSV format."""
    runs, num = view.runs, st.column_config.NumberColumn
    st.dataframe(runs.assign(test_acc=runs["test_acc"] * 100, best_val_acc=runs["best_val_acc"] * 100),
                 hide_index=True, placeholder="—",
                 column_config={"test_acc": num("test acc (%)", format="%.1f"),
                                "best_val_acc": num("best val acc (%)", format="%.1f"),
                                "epochs_run": num("epochs run"),
                                "key": st.column_config.TextColumn("run key", width="small")})
    done = runs[runs["source"] != "missing"].drop(columns="source")
    st.download_button("Download these runs (run CSV format)", done.to_csv(index=False),
                       file_name=f"runs_{dataset}_{split}.csv", mime="text/csv",
                       key="ds_download_runs",
                       help="The format of dropedge_explorer/assets/results/*.csv: put the file there "
                            "to bundle the runs with the app.")


def bundled_offer(cached, dataset: str) -> None:
    """No run of ``dataset`` at all (karate, the sidebar's default, has none bundled):
    one click opens the dataset/split with the most runs instead (the sidebar's pickers change,
    and the link with them), so that a newcomer sees a study, not an empty page."""
    if cached.empty or (cached["dataset"] == dataset).any():
        return
    counts = cached.groupby(["dataset", "split"]).size().sort_values(ascending=False, kind="stable")
    if counts.empty:
        return
    (best_dataset, best_split), n = counts.index[0], int(counts.iloc[0])
    w1, w2 = st.columns([5, 1.6])
    w1.info(f"**No runs of {dataset} yet** — neither bundled with the app "
            f"nor in the results store. The most runs are on **{best_dataset}/{best_split}** ({n} runs): "
            "open them to see the study, or press “Run missing” below to train this dataset's.")
    w2.button(f"Show {best_dataset}/{best_split}", key="ds_open_bundled", type="primary",
              on_click=_open_dataset, args=(best_dataset, best_split),
              help="Set the sidebar's dataset and split to these (the rest of the page follows).")


def _open_dataset(dataset: str, split: str) -> None:
    ss["dataset"], ss["split"] = dataset, split
    ss.pop("ds_seeds", None)  # the Seeds box reopens on every cached seed of the new cells


def fallback_warning(view: DepthView) -> None:
    """No run for the settings asked for: say which nearest settings are shown instead,
    with a button that takes them."""
    fallback = view.fallback
    where = " and ".join(f"{n} {'bundled with the app' if k == 'bundled' else 'from the results store'}"
                         for k, n in fallback["sources"].items())
    w1, w2 = st.columns([5, 1.3])
    w1.warning(f"**No runs for these settings yet** ({len(view.missing)} missing). **Shown instead: the "
               f"nearest settings with runs — {depth.describe_settings(fallback)}** "
               f"({fallback['runs']} runs: {where}"
               + ("" if view.narrowed else "; other backbones, samplers or depths than those picked")
               + "). Their settings differ from the ones above; “Use the bundled settings” picks them.")
    w2.button("Use the bundled settings", key="ds_use_bundled", type="primary",
              on_click=use_settings, args=(fallback,),
              help="Set the settings mode, the sidebar's keep rates, the epochs, the kernel and "
                   "the direction to those of the runs shown.")


def figure_notes(view: DepthView, dataset: str, split: str, has_paper_data: bool) -> None:
    """What the figure shows, whether DropEdge++ leads, and where measured and paper differ."""
    table, note = view.table, view.note
    partial = int((table["status"] != "measured").sum())
    st.caption(
        ("**Solid lines**: measured here — mean over the seeds with a run, error bars ± one "
         "standard deviation (hover a point for the count); the samplers are set a little "
         "apart at each depth so that their points do not hide each other. " if len(view.measured) else
         "Nothing measured for these settings yet: “Run missing” trains the runs. ")
        + (f"**Measured with other settings than those asked for** ({note}). " if note else "")
        + ("**Dashed lines, open circles**: the paper's numbers (its accuracy-by-depth table, "
           f"{split} split) — compare the trend more than single points. " if len(view.paper) else
           (f"The paper has no numbers for the {split} split of {dataset}. "
            if has_paper_data else f"The paper reports no numbers for {dataset}. "))
        + (f"**{partial} cell(s) not (fully) measured**: no point, or fewer seeds — see the table."
           if partial else "Every requested cell is measured." if note is None else ""))
    if view.findings:  # the paper's claim as the paper's, beside what the runs drawn show
        st.markdown(f"**The paper's claim**: {PAPER_CLAIM}. **What the runs drawn here show** — "
                    + " ".join(f"{backbone_label(b)}: " + " ".join(found)
                               for b, found in view.findings))
    if view.verdicts:  # the paper's claim, said plainly for what is drawn
        st.markdown("**Does DropEdge++ lead?** " + " ".join(
            f"{backbone_label(b)}: {v}" for b, v in view.verdicts)
            + " The tests are under the table (“Paired tests behind “Does DropEdge++ lead?””); why "
              "the paper's margins may not appear is in `docs/REPRODUCTION.md` (section 1).")
    gaps = view.gaps
    if len(gaps):
        worst = gaps.iloc[0]
        st.warning(
            f"**Measured and paper differ by more than {PAPER_GAP * 100:.0f} points** in "
            f"{len(gaps)} of {int(table['paper_test_acc'].notna().sum())} cells with a paper number "
            f"(largest: {backbone_label(worst['backbone'])} · {figures.sampler_label(worst['sampler'])} "
            f"· L = {worst['layers']}: measured {worst['test_acc_mean']:.1%}, paper "
            f"{worst['paper_test_acc']:.1%}). What we found about each gap is in "
            "`docs/REPRODUCTION.md` (below).")
        with st.expander("Why measured and paper differ (docs/REPRODUCTION.md)"):
            seeds = sorted({c.seed for c in view.configs})
            st.caption(f"This view: seeds {seeds[0]} … {seeds[-1]} per cell ({len(seeds)}, the “Seeds” "
                       "box). The notes below quote the seeds each of their tables names (up to 10 at "
                       "L = 16 and 32): set “Seeds” to that number before comparing a number.")
            st.markdown(reproduction_notes())
