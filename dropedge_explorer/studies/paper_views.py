"""The paper's tables beside ours: time per epoch, best accuracy per backbone.

Studies that the app's "The paper's tables" page (and a notebook) call: each takes the
paper's table from :mod:`dropedge_explorer.data.reference` and our measurement, and returns one
frame with both, ready for a table or :mod:`dropedge_explorer.figures.teaching`.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import pandas as pd
from dropedge_core.graph import Graph
from dropedge_core.models import check_backbone

from dropedge_explorer import paths
from dropedge_explorer.data import reference
from dropedge_explorer.studies.run_tables import BUNDLED_DIR, GROUP_COLUMNS, current, read_runs
from dropedge_explorer.training import TrainConfig, train

__all__ = [
    "MEN_ANALYSIS_FILE",
    "measure_epoch_times", "epoch_time_table",
    "best_runs", "best_accuracy_table", "men_analysis_runs", "read_men_analysis",
]

#: The paper's timing table's columns, by sampler.
PAPER_TIME_COLUMNS: dict[str, str] = {"nodrop": "nodrop_s", "dropedge": "dropedge_s",
                                      "dropedge++": "dropedge_plus_plus_s"}
TIME_SAMPLERS: tuple[str, ...] = tuple(PAPER_TIME_COLUMNS)
#: The bundled runs of the best depth per backbone (DropEdge++).
BEST_RUNS_FILE = BUNDLED_DIR / "best_per_backbone.csv"
#: The bundled MEN analysis of a 16-layer Cora GCN (``bench/make_men_analysis.py``); kept
#: out of ``dropedge_explorer/assets/results/``, whose every CSV the depth study reads as runs.
MEN_ANALYSIS_FILE = paths.SNAPSHOT_DIR / "men_analysis_cora_gcn16.csv"
#: The samplers of the paper's MEN analysis figure.
MEN_ANALYSIS_SAMPLERS: tuple[str, ...] = ("dropedge", "li", "lid", "ldd")
MEN_ANALYSIS_COLUMNS: tuple[str, ...] = ("sampler", "seed", "layers", "p_min", "p_max", "men",
                                         "val_loss", "distance", "test_acc", "epochs_run")


def measure_epoch_times(graph: Graph, base: TrainConfig, sampler_names: Sequence[str] = TIME_SAMPLERS,
                        progress: Callable[[str], None] | None = None) -> pd.DataFrame:
    """Train ``base`` for its ``epochs`` with each sampler on ``graph`` and time the epochs.

    Args:
        graph (Graph): the loaded graph.
        base (TrainConfig): the settings timed (its ``epochs`` are run).
        sampler_names (Sequence[str], optional): the samplers timed.
            (default: the samplers of the paper's time table)
        progress (Callable[[str], None], optional): called with the sampler's name before each.
            (default: :obj:`None`)

    Returns:
        ``sampler, sampling_s, training_s, total_s, epochs, device`` — mean seconds per
        epoch: sampling + normalisation, the rest (forward, backward, step, evaluation),
        and the whole epoch (the trainer's ``sample_time`` and ``epoch_time``); the first
        epoch is left out (warm-up) when there are more than two.
    """
    rows = []
    for name in sampler_names:  # one training run per sampler
        if progress is not None:
            progress(name)
        result = train(base.replace(sampler=name, diag_every=0, patience=0), graph=graph)
        hist = pd.DataFrame(result.history)
        if len(hist) > 2:
            hist = hist.iloc[1:]
        sample, total = float(hist["sample_time"].mean()), float(hist["epoch_time"].mean())
        rows.append({"sampler": name, "sampling_s": sample, "training_s": total - sample,
                     "total_s": total, "epochs": len(hist), "device": result.device})
    return pd.DataFrame(rows, columns=["sampler", "sampling_s", "training_s", "total_s", "epochs",
                                       "device"])


def epoch_time_table(measured: pd.DataFrame | None, paper: pd.DataFrame | None = None) -> pd.DataFrame:
    """The paper's time per epoch (Cora) and ours, one row per ``(sampler, source)``:
    ``sampler, source ("paper" | "measured here"), sampling_s, training_s, total_s,
    sampling_share`` (sampling / total).

    Args:
        measured (pandas.DataFrame, optional): :func:`measure_epoch_times` (``None``: the
            paper's rows only).
        paper (pandas.DataFrame, optional): the paper's times
            (:func:`dropedge_explorer.data.reference.paper_epoch_time` when ``None``).
            (default: :obj:`None`)
    """
    paper = reference.paper_epoch_time() if paper is None else paper
    by_phase = paper.set_index("phase")
    rows = [{"sampler": s, "source": "paper", **{f"{ph}_s": float(by_phase.loc[ph, col])
                                                 for ph in ("sampling", "training", "total")}}
            for s, col in PAPER_TIME_COLUMNS.items()]
    out = pd.DataFrame(rows)
    if measured is not None and len(measured):
        mine = measured[["sampler", "sampling_s", "training_s", "total_s"]].assign(source="measured here")
        out = pd.concat([out, mine], ignore_index=True)
    out["sampling_share"] = out["sampling_s"] / out["total_s"]
    order = {s: i for i, s in enumerate(dict.fromkeys([*TIME_SAMPLERS, *out["sampler"]]))}
    out = out.sort_values(["sampler", "source"], key=lambda c: c.map(order) if c.name == "sampler" else c)
    return out[["sampler", "source", "sampling_s", "training_s", "total_s", "sampling_share"]] \
        .reset_index(drop=True)


def best_runs(path: str | Path = BEST_RUNS_FILE) -> pd.DataFrame:
    """Mean ± std over seeds of every ``(dataset, split, backbone, sampler, layers)`` cell of
    the bundled best-per-backbone runs (read through :func:`dropedge_explorer.studies.run_tables.read_runs`,
    so columns the format gains, e.g. ``settings``, split the cells instead of mixing them).

    Args:
        path (str or Path, optional): the bundled runs file.
            (default: :obj:`assets/results/best_per_backbone.csv`)
    """
    runs = current(read_runs(path))  # an older sampler stream's runs never join a cell
    groups = list(GROUP_COLUMNS) + [c for c in ("settings",) if c in runs.columns]
    agg = runs.groupby(groups, dropna=False)["test_acc"].agg(["mean", "std", "count"]).reset_index()
    return agg.rename(columns={"mean": "ours_acc", "std": "ours_std", "count": "seeds"})


def best_accuracy_table(ours: pd.DataFrame, paper: pd.DataFrame | None = None,
                        sampler: str = "dropedge++") -> pd.DataFrame:
    """The paper's best test accuracy per backbone beside our best bundled cell.

    For each of the paper's ``(setting, dataset, backbone)`` rows, our cell of ``sampler``
    with the highest mean (from :func:`best_runs`) for that dataset, split and backbone.

    Args:
        ours (pandas.DataFrame): :func:`best_runs`.
        paper (pandas.DataFrame, optional): the paper's best accuracies
            (:func:`dropedge_explorer.data.reference.paper_best_accuracy` when ``None``).
            (default: :obj:`None`)
        sampler (str, optional): our sampler compared. (default: :obj:`"dropedge++"`)

    Returns:
        ``split, dataset, backbone, paper_acc, paper_std, paper_layers, ours_acc, ours_std,
        ours_layers, seeds, gap`` — accuracies in %, ``gap = ours − paper``; our columns
        empty where nothing was run.
    """
    paper = reference.paper_best_accuracy() if paper is None else paper
    p = pd.DataFrame({
        "split": paper["setting"].str.lower(), "dataset": paper["dataset_key"],
        "backbone": paper["backbone"].map(check_backbone), "paper_acc": paper["test_accuracy"].astype(float),
        "paper_std": paper["std"].astype(float), "paper_layers": paper["layers"].astype(int)})
    mine = ours[ours["sampler"] == sampler].sort_values("ours_acc", ascending=False) \
        .drop_duplicates(["dataset", "split", "backbone"])
    mine = mine.assign(ours_acc=100 * mine["ours_acc"], ours_std=100 * mine["ours_std"],
                       ours_layers=mine["layers"])
    out = p.merge(mine[["dataset", "split", "backbone", "ours_acc", "ours_std", "ours_layers", "seeds"]],
                  on=["dataset", "split", "backbone"], how="left")
    out["gap"] = out["ours_acc"] - out["paper_acc"]
    return out.reset_index(drop=True)


def men_analysis_runs(graph: Graph, base: TrainConfig, sampler_names: Sequence[str] = MEN_ANALYSIS_SAMPLERS,
                      seeds: Sequence[int] = (0,), progress: Callable[[str], None] | None = None
                      ) -> pd.DataFrame:
    """The paper's MEN analysis (its MEN figure: MEN against the validation loss and the
    "Distance", one point per sampler): train ``base`` with each sampler and seed.

    Per run: ``men`` — the mean MEN of the masks sampled at the diagnostics epochs
    (``base.diag_every``, so it must be > 0); ``val_loss`` — the lowest validation loss;
    ``distance`` — the paper's average layer distance of the last diagnostics (the
    trained model); ``test_acc`` at the best-validation epoch.

    Args:
        graph (Graph): the loaded graph.
        base (TrainConfig): the settings trained (``diag_every > 0``).
        sampler_names (Sequence[str], optional): the samplers trained.
            (default: :obj:`("dropedge", "li", "lid", "ldd")`)
        seeds (Sequence[int], optional): the seeds of each sampler. (default: :obj:`(0,)`)
        progress (Callable[[str], None], optional): called with ``"<sampler> seed <seed>"``
            before each run.
            (default: :obj:`None`)
    """
    if base.diag_every <= 0:
        raise ValueError("the MEN analysis needs diagnostics: diag_every must be > 0")
    rows = []
    for name in sampler_names:  # one training run per (sampler, seed)
        for seed in seeds:
            if progress is not None:
                progress(f"{name} seed {seed}")
            r = train(base.replace(sampler=name, seed=int(seed)), graph=graph)
            diags = [d for d in r.diagnostics if d.get("men") is not None]
            rows.append({"sampler": name, "seed": int(seed), "layers": base.num_layers,
                         "p_min": base.p_min, "p_max": base.p_max,
                         "men": sum(d["men"] for d in diags) / len(diags) if diags else float("nan"),
                         "val_loss": min(e["val_loss"] for e in r.history) if r.history else float("nan"),
                         "distance": diags[-1]["average_distance"] if diags else None,
                         "test_acc": r.test_acc, "epochs_run": r.epochs_run})
    return pd.DataFrame(rows, columns=list(MEN_ANALYSIS_COLUMNS))


def read_men_analysis(path: str | Path = MEN_ANALYSIS_FILE) -> pd.DataFrame:
    """The bundled MEN analysis (the columns of :data:`MEN_ANALYSIS_COLUMNS`).

    Args:
        path (str or Path, optional): the file read. (default: :obj:`MEN_ANALYSIS_FILE`)

    Raises:
        ValueError: a missing file or column (the message names it).
    """
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"MEN analysis file {path} is missing (make it with bench/make_men_analysis.py)")
    df = pd.read_csv(path)
    missing = [c for c in MEN_ANALYSIS_COLUMNS if c not in df.columns]
    if missing:
        raise ValueError(f"MEN analysis file {path} lacks column(s) {', '.join(missing)}")
    return df[list(MEN_ANALYSIS_COLUMNS)]
