"""What every subcommand shares: the error type, the config built from flags, the graph of
``--dataset`` or ``--edges``, progress bars and JSON output."""
from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Sequence

from dropedge_core import datasets

from dropedge_explorer.data import csv_graph, presets
from dropedge_explorer.studies.sweep import train_and_store, train_seeds_and_store
from dropedge_explorer.training import (
    UPLOAD_DATASET,
    TrainConfig,
    recipes,
)
from dropedge_explorer.training.checks import seeds_per_batch

DEFAULT_DATASET = "cora"
UPLOAD_SPLIT_SEED = 0  # the per-class split of an uploaded graph (like the app's)
MAX_RUNS = 10_000
MAX_SOURCES = 1_000_000

# CLI flag dest -> TrainConfig field (flags that may override a preset default to None)
_TRAIN_FLAGS: dict[str, str] = {
    "p_min": "p_min", "p_max": "p_max", "p": "p", "kernel": "kernel", "directed": "directed",
    "normalization": "normalization", "hidden": "hidden", "dropout": "dropout", "lr": "lr",
    "weight_decay": "weight_decay", "epochs": "epochs", "patience": "patience",
    "self_loop": "self_loop", "batch_norm": "batch_norm", "alpha": "alpha",
    "diag_every": "diag_every", "device": "device",
}


class CLIError(ValueError):
    """Bad command-line input that argparse cannot see (e.g. an empty grid)."""


def progress_bar(total: int, desc: str, args: argparse.Namespace):
    from tqdm import tqdm

    disable = True if args.no_progress else None  # None: only when stderr is a terminal
    return tqdm(total=total, desc=desc, file=sys.stderr, disable=disable, leave=False,
                dynamic_ncols=True)


def check_distinct_seeds(seeds: Sequence[int], flag: str = "--seeds") -> None:
    """Refuse a seed given twice: each seed is one run, so a repeat would train it again and
    count it twice in the mean (``train --seeds 0 0 1``: "over 3 seeds" of two)."""
    repeated = [seed for seed in dict.fromkeys(seeds) if seeds.count(seed) > 1]
    if repeated:
        seed = repeated[0]
        raise CLIError(f"{flag} repeats seed {seed} (given {seeds.count(seed)} times); each seed is one run: "
                       "give it once")


def recipe_of(args: argparse.Namespace) -> str:
    """``--recipe``, or ``paper`` for ``--preset paper``, else the default recipe."""
    if args.preset and args.recipe not in (None, "paper"):
        raise CLIError(f"--preset {args.preset} and --recipe {args.recipe} disagree; give one of them")
    return "paper" if args.preset else (args.recipe or recipes.DEFAULT_RECIPE)


def make_config(args: argparse.Namespace, dataset: str, backbone: str, **grid) -> TrainConfig:
    """The recipe's values ← explicit flags ← the grid point."""
    recipe = recipe_of(args)
    if recipe == "paper" and str(dataset).strip().lower() == UPLOAD_DATASET:
        raise CLIError("--recipe paper has no values for your own graph (the paper's presets are per "
                       "dataset); use --recipe depth or quick")
    values: dict = {"dataset": dataset, "split": args.split, "backbone": backbone, "recipe": recipe}
    values.update({field: getattr(args, dest) for dest, field in _TRAIN_FLAGS.items()
                   if getattr(args, dest) is not None})
    values.update({k: v for k, v in grid.items() if v is not None})
    return TrainConfig.from_dict(values)


def warn_preset_depth(configs: Sequence[TrainConfig]) -> None:
    """One warning per (dataset, split, backbone) run with the paper recipe at a depth the
    paper did not tune it for (its presets may not train there)."""
    seen = set()
    for c in configs:
        if c.recipe != "paper" or (c.dataset, c.split, c.backbone, c.num_layers) in seen:
            continue
        seen.add((c.dataset, c.split, c.backbone, c.num_layers))
        own = presets.paper_preset(c.dataset, c.split, c.backbone)["num_layers"]
        if c.num_layers != own:
            sys.stderr.write(f"warning: the paper preset for {c.dataset}/{c.split}/{c.backbone} was tuned "
                             f"at {own} layers; at {c.num_layers} it may not train (--recipe depth "
                             "has settings for every depth)\n")


def pct(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.1f}%"


def _finite(obj):
    """NaN/inf → ``None`` everywhere, so that stdout is strict JSON."""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {k: _finite(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_finite(v) for v in obj]
    return obj


def print_json(obj) -> None:
    sys.stdout.write(json.dumps(_finite(obj), indent=2, allow_nan=False) + "\n")


def load_dataset(dataset: str, split: str | None) -> datasets.Graph:
    if str(dataset).strip().lower() == UPLOAD_DATASET:
        raise CLIError("dataset 'upload' is your own graph: give its files with --edges PATH "
                       "[--features PATH] [--labels PATH] (men, train, tune)")
    return datasets.load(dataset, split)


def dataset_of(args: argparse.Namespace) -> str:
    """The dataset of ``men``/``train``/``tune``: ``"upload"`` with ``--edges``, else
    ``--dataset`` (default cora); the two exclude each other."""
    if args.edges is None:
        for flag in ("features", "labels"):
            if getattr(args, flag) is not None:
                raise CLIError(f"--{flag} needs --edges PATH (the edge list of your graph)")
        if args.dataset is not None and str(args.dataset).strip().lower() == UPLOAD_DATASET:
            load_dataset(UPLOAD_DATASET, None)  # says how to give the files
        return args.dataset if args.dataset is not None else DEFAULT_DATASET
    if args.dataset is not None and str(args.dataset).strip().lower() != UPLOAD_DATASET:
        raise CLIError(f"give either --dataset ({args.dataset}) or your own graph (--edges), not both")
    return UPLOAD_DATASET


def graph_of(args: argparse.Namespace, dataset: str, split: str | None, needs_labels: bool = False):
    """The graph to run on: a named dataset, or the files of ``--edges/--features/--labels``
    (:func:`dropedge_explorer.data.csv_graph.load_files`; its notes go to stderr)."""
    if dataset != UPLOAD_DATASET:
        return load_dataset(dataset, split)
    graph, notes = csv_graph.load_files(args.edges, args.features, args.labels, seed=UPLOAD_SPLIT_SEED)
    for note in notes:
        sys.stderr.write(f"note: {note}\n")
    if needs_labels and graph.num_classes == 0:
        raise CLIError(f"{graph.name} has no labels, so there is nothing to train on; give --labels PATH "
                       "(one label per node, or rows 'node,label')")
    return graph


def upload_summary(graph) -> dict:
    """What ``--json`` says about an uploaded graph."""
    return {"name": graph.name, "files": graph.info.get("files", {}), "num_nodes": graph.num_nodes,
            "num_edges": graph.num_edges, "num_classes": graph.num_classes,
            "notes": graph.info.get("notes", [])}


def train_runs(configs: list[TrainConfig], graph, args, store=None, desc="train"):
    """Train each config (graph shared), with a per-run epoch progress bar; with
    ``--batch-seeds`` the seeds together (:func:`train_batched_runs`)."""
    if getattr(args, "batch_seeds", False):
        return train_batched_runs(configs, graph, args, store=store, desc=desc)
    results = []
    for config in configs:
        bar = progress_bar(config.epochs, f"{desc} seed {config.seed}", args)

        def on_event(event, bar=bar):
            if event["type"] == "epoch":
                bar.update(1)
                bar.set_postfix(loss=f"{event['train_loss']:.3f}", val=f"{event['val_acc']:.3f}",
                                refresh=False)

        try:
            result = train_and_store(config, store, graph=graph, on_event=on_event)
        finally:
            bar.close()
        results.append(result)
    return results


def train_batched_runs(configs: list[TrainConfig], graph, args, store=None, desc="train"):
    """``--batch-seeds``: the configs' seeds trained in one batch (or as many as memory
    holds), stored one row per seed as single runs are; one bar over every seed's epochs."""
    seeds = " ".join(str(c.seed) for c in configs)
    size = seeds_per_batch(configs[0], graph, len(configs))
    if size < len(configs):  # train_seeds splits the same way
        sys.stderr.write(f"note: the memory limit holds {size} of the {len(configs)} seeds at once; "
                         f"training them in {-(-len(configs) // size)} batches\n")
    bar = progress_bar(sum(c.epochs for c in configs), f"{desc} seeds {seeds} (batched)", args)

    def on_event(event):
        if event["type"] == "epoch":
            bar.update(1)
        elif event["type"] == "end":  # a seed that ends early leaves its epochs undone
            bar.update(configs[0].epochs - event["epochs_run"])

    try:
        return train_seeds_and_store(configs, store, graph=graph, on_event=on_event)
    finally:
        bar.close()
