"""Command line: ``python -m dropedge_core {datasets,train,men,sweep,tune} ...``.

Every subcommand has ``--help``; ``--json`` prints machine-readable output to stdout;
progress bars go to stderr (only when it is a terminal, or never with ``--no-progress``).
Bad input exits with code 2 and one line ``error: ...`` naming the bad value — never a
traceback.

Examples::

    python -m dropedge_core datasets
    python -m dropedge_core train --dataset cora --split semi --backbone gcn --layers 2 \\
        --sampler nodrop --seeds 0 1 2 --json
    python -m dropedge_core train --dataset cora --backbone gcn --preset paper --layers 8 \\
        --sampler dropedge++
    python -m dropedge_core men --dataset cora --sampler lid li --layers 4 8 16 \\
        --p-min 0.05 --p-max 1.0 --runs 10
    python -m dropedge_core sweep --dataset cora --backbones gcn resgcn \\
        --samplers nodrop dropedge dropedge++ --layers 2 4 8 --seeds 0 1 2 \\
        --store results/results.sqlite      # or postgresql://me@db.lab/dropedge_results: start
                                             # it on several machines, they split the grid
    python -m dropedge_core tune --dataset csbm --backbone gcn --layers 8 --trials 20 \\
        --study demo --storage sqlite:///results/tuning.sqlite
    python -m dropedge_core train --edges my_edges.csv --features my_features.csv \\
        --labels my_labels.csv --layers 4 --sampler dropedge++

Your own graph: ``--edges PATH [--features PATH] [--labels PATH]`` on ``men``, ``train``
and ``tune`` instead of ``--dataset`` (:mod:`dropedge_core.data.csv_graph`: CSV text, read as
data only, never unpickled or evaluated; repairs are printed to stderr as ``note: ...``
lines, an unusable file is exit 2 with one ``error: ...`` line). Its split is 20/30
labelled nodes per class from seed 0; training needs ``--labels``.
"""
from __future__ import annotations

import argparse
import itertools
import json
import math
import statistics
import sys
from collections.abc import Sequence

import torch

from dropedge_core import databases, env, memory
from dropedge_core.data import csv_graph as upload
from dropedge_core.data import datasets, presets
from dropedge_core.method import metrics, samplers
from dropedge_core.method.models import BACKBONES
from dropedge_core.method.normalization import METHODS
from dropedge_core.training import (
    MAX_SEED,
    UPLOAD_DATASET,
    ConfigError,
    TrainConfig,
    check_memory,
    check_trainable,
    recipes,
    train,
)

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


class _Parser(argparse.ArgumentParser):
    """argparse with a one-line ``error: ...`` and exit code 2 (no usage dump)."""

    def error(self, message: str) -> None:  # type: ignore[override]
        sys.stderr.write(f"error: {message}\n")
        sys.exit(2)


def _add_run_flags(p: argparse.ArgumentParser) -> None:
    """Training flags shared by ``train``, ``sweep`` and ``tune``; ``None`` = not given
    (the recipe's value applies)."""
    g = p.add_argument_group("training (each overrides the recipe's value)")
    g.add_argument("--recipe", default=None, choices=recipes.RECIPES,
                   help="the settings a run takes for every flag not given: depth (default; by depth "
                        "L: the usual GCN settings up to L = 4, from L = 5 lr 1e-3, no dropout, no "
                        "weight decay, Loop on, 200-400 epochs), quick (the shallow settings at every "
                        "depth) or paper (the paper's best hyperparameters and depth for "
                        "dataset/split/backbone)"),
    g.add_argument("--split", default=None, help="semi | full (citation graphs); default: the dataset's")
    g.add_argument("--p-min", type=float, default=None, help="keep rate of the sparsest layer (recipe: 0.3)")
    g.add_argument("--p-max", type=float, default=None, help="keep rate of the densest layer (recipe: 0.8)")
    g.add_argument("--p", type=float, default=None,
                   help="keep rate of dropedge/fd (default (p_min + p_max) / 2)")
    g.add_argument("--kernel", default=None,
                   help=f"FD kernel: {', '.join(samplers.KERNELS)} (default linear)")
    g.add_argument("--directed", action=argparse.BooleanOptionalAction, default=None,
                   help="sample the two directions of an edge separately (the authors' code)")
    g.add_argument("--normalization", default=None, help=f"{', '.join(METHODS)} (recipe: AN)")
    g.add_argument("--hidden", type=int, default=None, help="hidden width (recipe: 128; 64 from L = 17)")
    g.add_argument("--dropout", type=float, default=None,
                   help="dropout rate in [0, 1) (recipe: 0.5 up to L = 4, then 0)")
    g.add_argument("--lr", type=float, default=None,
                   help="Adam learning rate (recipe: 0.01 up to L = 4, then 0.001)")
    g.add_argument("--weight-decay", type=float, default=None,
                   help="Adam weight decay (recipe: 5e-4 up to L = 4, then 0)")
    g.add_argument("--epochs", type=int, default=None,
                   help="epochs (recipe: 200 up to L = 8, 300 up to 16, then 400)")
    g.add_argument("--patience", type=int, default=None,
                   help="early-stopping patience in epochs, 0 = off (recipe: 100; half the epochs "
                        "from L = 5)")
    g.add_argument("--self-loop", action=argparse.BooleanOptionalAction, default=None,
                   help="self-feature modelling, the paper's 'Loop' (recipe: on from L = 5)")
    g.add_argument("--batch-norm", action=argparse.BooleanOptionalAction, default=None,
                   help="batch normalisation")
    g.add_argument("--alpha", type=float, default=None, help="APPNP* teleport coefficient (recipe: 0.1)")
    g.add_argument("--diag-every", type=int, default=None,
                   help="diagnostics (MEN, layer distances, ...) every k epochs, 0 = off (default 10)")
    g.add_argument("--device", default=None, help="auto (CUDA if available) | cpu | cuda (default auto)")
    g.add_argument("--preset", default=None, choices=presets.PRESETS,
                   help="--preset paper is --recipe paper")
    g.add_argument("--seeds", type=int, nargs="+", default=[0], help="seeds, one run each (default 0)")


def _add_upload_flags(p: argparse.ArgumentParser) -> None:
    """``--edges/--features/--labels``: the user's own graph instead of ``--dataset``."""
    g = p.add_argument_group("your own graph, instead of --dataset (CSV text; read as data only)")
    g.add_argument("--edges", metavar="PATH", default=None,
                   help="edge list: rows 'source,target' of integer node ids 0..N-1 (a header row, "
                        "spaces or tabs are fine; self-loops and duplicates are dropped)")
    g.add_argument("--features", metavar="PATH", default=None,
                   help="node features: one row of numbers per node, row i = node i "
                        "(default: one constant feature)")
    g.add_argument("--labels", metavar="PATH", default=None,
                   help="node labels: one per node in node order, or rows 'node,label'; integers or "
                        "class names, -1 or empty = unlabelled (train and tune need them)")


def _add_output_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true", help="machine-readable output on stdout")
    p.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    p.add_argument("--threads", type=int, default=None,
                   help="torch CPU threads (default $DROPEDGE_TORCH_THREADS or 1: torch's OpenMP "
                        "pool stalls badly when its cores are shared)")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="python -m dropedge_core",
                     description="DropEdge++ Explorer: samplers, MEN and deep-GCN training "
                                 "(Structure-Aware DropEdge, the paper's method).")
    sub = parser.add_subparsers(dest="command", metavar="{datasets,train,men,sweep,tune,search}")
    sub.required = True

    p = sub.add_parser("datasets", help="list datasets and whether each is available offline",
                       description="List the datasets and where each would load from now.")
    p.add_argument("--json", action="store_true", help="machine-readable output on stdout")

    p = sub.add_parser("train", help="train one configuration over one or more seeds",
                       description="Train a backbone with an edge sampler; report the test accuracy "
                                   "at the best-validation epoch, per seed and averaged.")
    p.add_argument("--dataset", default=None, help=f"{', '.join(datasets.NAMES)} (default cora)")
    p.add_argument("--backbone", default="gcn", help=f"{', '.join(BACKBONES)} (default gcn)")
    p.add_argument("--layers", type=int, default=None,
                   help="number of layers L (default 2; the preset's with --recipe paper)")
    p.add_argument("--sampler", default=None, help=f"{', '.join(samplers.NAMES)} (default dropedge++)")
    _add_run_flags(p)
    p.add_argument("--store", default=None, metavar="PATH|URL",
                   help="also store the runs in this results store (a SQLite file or postgresql://...)")
    _add_upload_flags(p)
    _add_output_flags(p)

    p = sub.add_parser("men", help="Mean-Edge-Number of samplers by depth",
                       description="MEN = (1/L) sum_l |prod_{i<=l} (A^(i) + I)| averaged over runs "
                                   "(paper Definition 1), per sampler and depth.")
    p.add_argument("--dataset", default=None, help=f"{', '.join(datasets.NAMES)} (default cora)")
    p.add_argument("--split", default=None, help=argparse.SUPPRESS)
    p.add_argument("--sampler", "--samplers", dest="samplers", nargs="+",
                   default=["dropedge", "li", "lid", "ldd"], help="samplers (default dropedge li lid ldd)")
    p.add_argument("--layers", type=int, nargs="+", default=[4, 8, 16], help="depths (default 4 8 16)")
    p.add_argument("--p-min", type=float, default=0.05, help="default 0.05 (the paper's MEN table)")
    p.add_argument("--p-max", type=float, default=1.0, help="default 1.0")
    p.add_argument("--p", type=float, default=None, help="keep rate of dropedge/fd (default (p_min+p_max)/2)")
    p.add_argument("--kernel", default="linear", help=f"{', '.join(samplers.KERNELS)} (default linear)")
    p.add_argument("--directed", action="store_true", help="sample directions separately")
    p.add_argument("--runs", type=int, default=10, help="samples per sampler and depth (default 10)")
    p.add_argument("--seed", type=int, default=0, help="seed of the sample generator (default 0)")
    p.add_argument("--estimate", action="store_true", help="estimate MEN from sampled source nodes")
    p.add_argument("--sources", type=int, default=512, help="source nodes for --estimate (default 512)")
    _add_upload_flags(p)
    _add_output_flags(p)

    p = sub.add_parser("sweep", help="depth x sampler x backbone x seeds into the results store (resumable)",
                       description="Train every combination and store each run; runs already in the "
                                   "store are skipped, so an interrupted sweep resumes where it stopped. "
                                   "Each run is claimed before training: sweeps started at once on one "
                                   "store (a PostgreSQL URL for several machines) split the grid.")
    p.add_argument("--datasets", "--dataset", dest="datasets", nargs="+", default=["cora"],
                   help="datasets (default cora)")
    p.add_argument("--backbones", "--backbone", dest="backbones", nargs="+", default=["gcn"],
                   help=f"{', '.join(BACKBONES)} (default gcn)")
    p.add_argument("--samplers", "--sampler", dest="samplers", nargs="+",
                   default=["nodrop", "dropedge", "dropedge++"], help="default nodrop dropedge dropedge++")
    p.add_argument("--layers", type=int, nargs="+", default=None,
                   help="depths (default 2 4 8; with --recipe paper, each preset's own depth)")
    _add_run_flags(p)
    p.add_argument("--store", default=None, metavar="PATH|URL",
                   help="results store: a SQLite file, or postgresql://user@host:port/db for workers on "
                        "several machines (default $DROPEDGE_RESULTS or results/results.sqlite)")
    p.add_argument("--lease", type=float, default=120.0, metavar="SECONDS",
                   help="each run is claimed before training and the claim renewed while it trains; "
                        "a claim not renewed for this long (its worker died) is taken over "
                        "(default 120)")
    _add_output_flags(p)

    p = sub.add_parser("tune", help="Optuna study over p_min / p_max' (and lr, dropout, weight decay)",
                       description="Search the keep rates (the paper's p_min and p_max') with Optuna, "
                                   "maximising validation accuracy; report the best trial's test "
                                   "accuracy. Workers started with the same --storage and --study "
                                   "share one study.")
    p.add_argument("--dataset", default=None, help=f"{', '.join(datasets.NAMES)} (default cora)")
    p.add_argument("--backbone", default="gcn", help=f"{', '.join(BACKBONES)} (default gcn)")
    p.add_argument("--layers", type=int, default=None,
                   help="number of layers L (default 2; the preset's with --recipe paper)")
    p.add_argument("--sampler", default=None, help=f"{', '.join(samplers.NAMES)} (default dropedge++)")
    p.add_argument("--trials", type=int, default=20, help="trials this worker runs (default 20)")
    p.add_argument("--study", default=None,
                   help="study name (default dropedge-<user>-<dataset>-<backbone>-L<layers>-<sampler>-<hash "
                        "of every setting>: the same settings by the same user share one study)")
    p.add_argument("--storage", default=None,
                   help="Optuna storage URL or SQLite file (default sqlite:///results/tuning.sqlite); "
                        "postgresql://... or mysql://... for workers on several machines")
    p.add_argument("--search", default="tpe", choices=("tpe", "random"),
                   help="TPE (default) or random search (the paper's)")
    p.add_argument("--tune", dest="tune_extra", nargs="*", default=[], metavar="PARAM",
                   help="also tune these: lr, dropout, weight_decay, hidden (the keep rates are always "
                        "tuned: p_min and p_max', DropEdge's p, nothing for nodrop)")
    p.add_argument("--no-pruning", action="store_true", help="run every trial to the end")
    _add_run_flags(p)
    _add_upload_flags(p)
    _add_output_flags(p)

    p = sub.add_parser("search", help="the per-cell search: tune every depth x sampler on its own, then "
                                      "train each cell's best on several seeds",
                       description="For each depth and sampler, an Optuna study (TPE, median pruning, "
                                   "the same --trials for every sampler; the recipe's own point first) "
                                   "over lr, dropout, weight decay, hidden width and the sampler's keep "
                                   "rates, on validation accuracy; then each cell's best trained on "
                                   "--best-seeds and stored. Stopped and started again, it resumes.")
    p.add_argument("--dataset", default=DEFAULT_DATASET, help=f"{', '.join(datasets.NAMES)} (default cora)")
    p.add_argument("--split", default=None, help="semi | full (citation graphs); default: the dataset's")
    p.add_argument("--backbone", default="gcn", help=f"{', '.join(BACKBONES)} (default gcn)")
    p.add_argument("--layers", type=int, nargs="+", default=[8, 16, 32, 64], help="depths (default 8 16 32 64)")
    p.add_argument("--samplers", nargs="+", default=["nodrop", "dropedge", "dropedge++"],
                   help="default nodrop dropedge dropedge++")
    p.add_argument("--recipe", default="depth", choices=recipes.RECIPES, help="the starting point (default depth)")
    p.add_argument("--trials", type=int, default=12, help="trials per cell, pruned ones included (default 12)")
    p.add_argument("--best-seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4],
                   help="seeds each cell's best is trained on (default 0 1 2 3 4)")
    p.add_argument("--storage", default=None,
                   help="Optuna storage URL or SQLite file (default sqlite:///results/tuning.sqlite)")
    p.add_argument("--store", default=None, metavar="PATH|URL",
                   help="results store for the best runs (default $DROPEDGE_RESULTS or results/results.sqlite)")
    _add_output_flags(p)
    return parser


# --------------------------------------------------------------------------- helpers
def _progress(total: int, desc: str, args: argparse.Namespace):
    from tqdm import tqdm

    disable = True if args.no_progress else None  # None: only when stderr is a terminal
    return tqdm(total=total, desc=desc, file=sys.stderr, disable=disable, leave=False,
                dynamic_ncols=True)


def _recipe(args: argparse.Namespace) -> str:
    """``--recipe``, or ``paper`` for ``--preset paper``, else the default recipe."""
    if args.preset and args.recipe not in (None, "paper"):
        raise CLIError(f"--preset {args.preset} and --recipe {args.recipe} disagree; give one of them")
    return "paper" if args.preset else (args.recipe or recipes.DEFAULT_RECIPE)


def make_config(args: argparse.Namespace, dataset: str, backbone: str, **grid) -> TrainConfig:
    """The recipe's values ← explicit flags ← the grid point."""
    recipe = _recipe(args)
    if recipe == "paper" and str(dataset).strip().lower() == UPLOAD_DATASET:
        raise CLIError("--recipe paper has no values for your own graph (the paper's presets are per "
                       "dataset); use --recipe depth or quick")
    values: dict = {"dataset": dataset, "split": args.split, "backbone": backbone, "recipe": recipe}
    values.update({field: getattr(args, dest) for dest, field in _TRAIN_FLAGS.items()
                   if getattr(args, dest) is not None})
    values.update({k: v for k, v in grid.items() if v is not None})
    return TrainConfig.from_dict(values)


def _warn_preset_depth(configs: Sequence[TrainConfig]) -> None:
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


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.1f}%"


def _mean_std(values: Sequence[float]) -> tuple[float | None, float | None]:
    values = [v for v in values if v is not None]
    if not values:
        return None, None
    return statistics.fmean(values), (statistics.stdev(values) if len(values) > 1 else 0.0)


def _finite(obj):
    """NaN/inf → ``None`` everywhere, so that stdout is strict JSON."""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {k: _finite(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_finite(v) for v in obj]
    return obj


def _print_json(obj) -> None:
    sys.stdout.write(json.dumps(_finite(obj), indent=2, allow_nan=False) + "\n")


def _load(dataset: str, split: str | None) -> datasets.Graph:
    if str(dataset).strip().lower() == UPLOAD_DATASET:
        raise CLIError("dataset 'upload' is your own graph: give its files with --edges PATH "
                       "[--features PATH] [--labels PATH] (men, train, tune)")
    return datasets.load(dataset, split)


def _dataset(args: argparse.Namespace) -> str:
    """The dataset of ``men``/``train``/``tune``: ``"upload"`` with ``--edges``, else
    ``--dataset`` (default cora); the two exclude each other."""
    if args.edges is None:
        for flag in ("features", "labels"):
            if getattr(args, flag) is not None:
                raise CLIError(f"--{flag} needs --edges PATH (the edge list of your graph)")
        if args.dataset is not None and str(args.dataset).strip().lower() == UPLOAD_DATASET:
            _load(UPLOAD_DATASET, None)  # says how to give the files
        return args.dataset if args.dataset is not None else DEFAULT_DATASET
    if args.dataset is not None and str(args.dataset).strip().lower() != UPLOAD_DATASET:
        raise CLIError(f"give either --dataset ({args.dataset}) or your own graph (--edges), not both")
    return UPLOAD_DATASET


def _graph(args: argparse.Namespace, dataset: str, split: str | None, needs_labels: bool = False):
    """The graph to run on: a named dataset, or the files of ``--edges/--features/--labels``
    (:func:`dropedge_core.data.csv_graph.load_files`; its notes go to stderr)."""
    if dataset != UPLOAD_DATASET:
        return _load(dataset, split)
    graph, notes = upload.load_files(args.edges, args.features, args.labels, seed=UPLOAD_SPLIT_SEED)
    for note in notes:
        sys.stderr.write(f"note: {note}\n")
    if needs_labels and graph.num_classes == 0:
        raise CLIError(f"{graph.name} has no labels, so there is nothing to train on; give --labels PATH "
                       "(one label per node, or rows 'node,label')")
    return graph


def _upload_summary(graph) -> dict:
    """What ``--json`` says about an uploaded graph."""
    return {"name": graph.name, "files": graph.info.get("files", {}), "num_nodes": graph.num_nodes,
            "num_edges": graph.num_edges, "num_classes": graph.num_classes,
            "notes": graph.info.get("notes", [])}


def _train_runs(configs: list[TrainConfig], graph, args, store=None, desc="train"):
    """Train each config (graph shared), with a per-run epoch progress bar."""
    results = []
    for config in configs:
        bar = _progress(config.epochs, f"{desc} seed {config.seed}", args)

        def on_event(event, bar=bar):
            if event["type"] == "epoch":
                bar.update(1)
                bar.set_postfix(loss=f"{event['train_loss']:.3f}", val=f"{event['val_acc']:.3f}",
                                refresh=False)

        try:
            result = train(config, graph=graph, on_event=on_event)
        finally:
            bar.close()
        if store is not None:
            store.put(result)
        results.append(result)
    return results


# --------------------------------------------------------------------------- commands
def cmd_datasets(args: argparse.Namespace) -> int:
    problem = datasets.data_dir_problem()
    if problem:
        sys.stderr.write(f"warning: {problem}; datasets not cached need a download\n")
    rows = datasets.available()
    if args.json:
        _print_json(rows)
        return 0
    print(f"{'name':<18}{'available from':<16}{'offline':<9}splits")
    for r in rows:
        print(f"{r['name']:<18}{r['availability']:<16}{'yes' if r['offline'] else 'no':<9}{r['splits']}")
    print("(download = needs the internet; set DROPEDGE_DATA to a folder with PyG's raw layout)")
    return 0


def cmd_train(args: argparse.Namespace) -> int:
    dataset = _dataset(args)
    configs = [make_config(args, dataset, args.backbone, num_layers=args.layers,
                           sampler=args.sampler, seed=seed) for seed in args.seeds]
    _warn_preset_depth(configs)
    if args.store and dataset == UPLOAD_DATASET:
        raise CLIError("--store keeps runs under their dataset's name, which an uploaded graph (--edges) "
                       "does not have; use --json to keep the results")
    graph = _graph(args, dataset, configs[0].split, needs_labels=True)
    store = None
    if args.store:
        from dropedge_core.store import ResultStore

        store = ResultStore(args.store)
    results = _train_runs(configs, graph, args, store=store)
    mean, std = _mean_std([r.test_acc for r in results])
    if args.json:
        base = configs[0].to_dict()
        base.pop("seed")
        out = {"config": base, "seeds": list(args.seeds), "test_acc_mean": mean,
               "test_acc_std": std, "runs": [r.summary() for r in results],
               "store": str(store.path) if store else None}
        if dataset == UPLOAD_DATASET:
            out["upload"] = _upload_summary(graph)
        _print_json(out)
        return 0
    c = configs[0]
    where = f"{graph.name} (uploaded)" if dataset == UPLOAD_DATASET else c.dataset
    print(f"{where}/{c.split} {c.backbone} L={c.num_layers} sampler={c.sampler} "
          f"p_min={c.p_min:g} p_max={c.p_max:g} norm={c.normalization} hidden={c.hidden} "
          f"dropout={c.dropout:g} lr={c.lr:g} wd={c.weight_decay:g} loop={c.self_loop} "
          f"epochs={c.epochs} patience={c.patience} device={results[0].device}")
    print(f"settings: {c.settings} (recipe {c.recipe!r}; --recipe and the training flags change them)")
    for r in results:
        print(f"  seed {r.config.seed}: test {_pct(r.test_acc)} (best val {_pct(r.best_val_acc)} at "
              f"epoch {r.best_epoch}; {r.epochs_run} epochs, {r.total_time:.1f} s, "
              f"{(r.mean_epoch_time or 0):.4f} s/epoch) [{r.reason}]")
        if r.reason == "nan":
            print(f"    {r.message}")
    std_txt = f" ± {100 * std:.1f}" if std is not None else ""
    print(f"mean test accuracy: {_pct(mean)}{std_txt} over {len(results)} seed(s)")
    if store:
        print(f"stored in {store.path}")
    return 0


def cmd_men(args: argparse.Namespace) -> int:
    if not 1 <= args.runs <= MAX_RUNS:
        raise CLIError(f"--runs must be an integer in 1..{MAX_RUNS} (got {args.runs})")
    if not 1 <= args.sources <= MAX_SOURCES:
        raise CLIError(f"--sources must be an integer in 1..{MAX_SOURCES} (got {args.sources})")
    if not 0 <= args.seed <= MAX_SEED:
        raise CLIError(f"--seed must be an integer in 0..{MAX_SEED} (got {args.seed})")
    for layers in args.layers:
        samplers.check_layers(layers)
    made = [samplers.make(name, p_min=args.p_min, p_max=args.p_max, p=args.p, kernel=args.kernel,
                          directed=args.directed) for name in args.samplers]
    dataset = _dataset(args)
    graph = _graph(args, dataset, args.split)
    if not args.estimate and graph.num_nodes > metrics.EXACT_ALLOWED_MAX_NODES:
        raise CLIError(f"{graph.name} has {graph.num_nodes} nodes > {metrics.EXACT_ALLOWED_MAX_NODES}: "
                       "exact MEN needs an N x N matrix; add --estimate")
    sources = min(args.sources, graph.num_nodes) if args.estimate else graph.num_nodes
    memory.check(memory.men_bytes(graph.num_nodes, graph.num_edges, max(args.layers), sources),
                 f"MEN at L={max(args.layers)} on {graph.name} (N={graph.num_nodes}, M={graph.num_edges})",
                 "use fewer layers, fewer --sources or a smaller graph")
    gen = torch.Generator().manual_seed(args.seed)
    rows = []
    bar = _progress(len(made) * len(args.layers) * args.runs, "MEN", args)
    try:
        for sampler, layers in itertools.product(made, args.layers):
            values, curves, errs = [], [], []
            for _ in range(args.runs):
                masks = sampler.sample(graph, layers, generator=gen)
                if args.estimate:
                    est = metrics.men_estimate(graph, masks, args.sources, generator=gen)
                    values.append(est.value)
                    errs.append(est.stderr)
                    curves.append(list(est.edge_numbers))
                else:
                    counts = metrics.edge_numbers(graph, masks)
                    values.append(sum(counts) / len(counts))
                    curves.append(counts)
                bar.update(1)
            mean, std = _mean_std(values)
            cols = list(zip(*curves))
            row = {"sampler": sampler.name, "layers": layers, "men_mean": mean, "men_std": std,
                   "runs": args.runs, "edge_numbers_mean": [statistics.fmean(c) for c in cols],
                   "edge_numbers_std": [statistics.stdev(c) if len(c) > 1 else 0.0 for c in cols],
                   "estimate": bool(args.estimate)}
            if args.estimate:
                row["men_stderr_mean"] = statistics.fmean(errs)
            rows.append(row)
    finally:
        bar.close()
    if args.json:
        out = {"dataset": graph.name, "num_nodes": graph.num_nodes, "num_edges": graph.num_edges,
               "p_min": args.p_min, "p_max": args.p_max, "rows": rows}
        if dataset == UPLOAD_DATASET:
            out["upload"] = _upload_summary(graph)
        _print_json(out)
        return 0
    print(f"MEN on {graph.name} (N={graph.num_nodes}, M={graph.num_edges}), p_min={args.p_min:g}, "
          f"p_max={args.p_max:g}, {args.runs} runs{' (estimated)' if args.estimate else ''}")
    print(f"{'sampler':<12}{'layers':>7}{'MEN mean':>14}{'std':>12}")
    for r in rows:
        print(f"{r['sampler']:<12}{r['layers']:>7}{r['men_mean']:>14.4g}{r['men_std']:>12.3g}")
    return 0


def sweep_grid(args: argparse.Namespace) -> list[TrainConfig]:
    """Every (dataset, backbone, depth, sampler, seed) of a ``sweep``. Without ``--layers``
    the depths are 2 4 8, or with the paper recipe each preset's own depth (the paper's
    best-per-backbone table)."""
    # None = keep the preset's depth (make_config ignores None grid values)
    depths = args.layers or ([None] if _recipe(args) == "paper" else [2, 4, 8])
    return [make_config(args, dataset, backbone, num_layers=layers, sampler=sampler, seed=seed)
            for dataset, backbone, layers, sampler, seed in itertools.product(
                args.datasets, args.backbones, depths, args.samplers, args.seeds)]


def cmd_sweep(args: argparse.Namespace) -> int:
    from dropedge_core.claims import ClaimedRuns, check_lease
    from dropedge_core.store import ResultStore, run_key

    lease = check_lease(args.lease)
    grid = sweep_grid(args)  # every setting checked before the store is opened (nothing written)
    if not grid:
        raise CLIError("the sweep grid is empty")
    graphs = {}
    for c in grid:  # load (and fail on) every dataset before the first run
        if (c.dataset, c.split) not in graphs:
            graphs[(c.dataset, c.split)] = _load(c.dataset, c.split)
    for c in grid:  # refuse a too-big run before the first one trains
        check_memory(c, graphs[(c.dataset, c.split)])
    store = ResultStore(args.store)
    # claimed one at a time: sweeps started on one store (here or on other machines) split
    # the grid, and a run stored by anyone (before, or meanwhile) is not trained again
    runs = ClaimedRuns(store, grid, lease=lease)
    bar = _progress(runs.total, "sweep", args)
    ran, lost = [], 0
    claimed = iter(runs)
    try:
        for claim in claimed:
            c = claim.config
            bar.n = runs.over
            bar.set_postfix_str(f"{c.dataset} {c.backbone} L={c.num_layers} {c.sampler} seed={c.seed}")
            result = train(c, graph=graphs[(c.dataset, c.split)], stop_event=claim.lost)
            if result.reason == "stopped":  # the lease ran out and another worker took the run
                lost += 1
                sys.stderr.write(f"note: run {claim.key[:12]} was taken over by another worker "
                                 f"({claim.heartbeat.error}); not stored here\n")
                continue
            store.put(result)  # one transaction per run: a kill loses at most the run in flight
            runs.stored(claim)
            ran.append(result)
            bar.n = runs.over
            bar.refresh()
    finally:
        claimed.close()  # releases a claim held when training failed or was interrupted
        bar.close()
    skipped = runs.skipped
    keys = {run_key(c) for c in grid}
    df = store.to_frame()
    df = df[df["key"].isin(keys)]
    table = []
    if len(df):
        grouped = df.groupby(["dataset", "split", "backbone", "num_layers", "sampler"], sort=True)
        for (dataset, split, backbone, layers, sampler), part in grouped:
            mean, std = _mean_std([v for v in part["test_acc"].tolist() if v == v])
            table.append({"dataset": dataset, "split": split, "backbone": backbone,
                          "num_layers": int(layers), "sampler": sampler, "runs": int(len(part)),
                          "test_acc_mean": mean, "test_acc_std": std})
    if args.json:
        _print_json({"store": str(store.path), "worker": runs.owner, "total": len(grid),
                     "distinct": runs.total, "skipped": skipped, "ran": len(ran),
                     "ran_keys": runs.trained_keys, "taken_over_from_here": lost,
                     "not_finite": [r.config.to_dict() for r in ran if r.reason == "nan"],
                     "results": table})
        return 0
    print(f"sweep: {runs.total} runs, {skipped} stored before or by other workers, {len(ran)} trained "
          f"here -> {store.path}")
    print(f"{'dataset':<10}{'backbone':<9}{'L':>4}  {'sampler':<12}{'runs':>5}{'test acc':>16}")
    for r in table:
        std = "" if r["test_acc_std"] is None else f" ± {100 * r['test_acc_std']:.1f}"
        print(f"{r['dataset']:<10}{r['backbone']:<9}{r['num_layers']:>4}  {r['sampler']:<12}"
              f"{r['runs']:>5}{_pct(r['test_acc_mean']):>9}{std}")
    return 0


def cmd_tune(args: argparse.Namespace) -> int:
    from dropedge_core.studies import tuning

    if len(args.seeds) != 1:
        raise CLIError(f"tune takes one --seeds value (got {args.seeds})")
    tuning.check_storage(args.storage)  # before any work: a storage that cannot be used is one line
    dataset = _dataset(args)
    base = make_config(args, dataset, args.backbone, num_layers=args.layers,
                       sampler=args.sampler, seed=args.seeds[0])
    graph = _graph(args, dataset, base.split, needs_labels=True)
    check_trainable(base, graph)  # one class, above the memory limit: refused before any trial
    space = tuning.SearchSpace.for_sampler(base.sampler, args.tune_extra)
    if args.study is None:
        args.study = tuning.default_study_name(base, space, args.search, graph)
    elif not args.study.strip() or len(args.study) > 200:
        raise CLIError(f"--study must be a name of 1..200 characters (got {args.study[:40]!r})")
    bar = _progress(args.trials, f"tune {args.study}", args)

    def on_trial(study, trial) -> None:
        bar.update(1)
        best = tuning.best_summary(study)
        if best:
            bar.set_postfix(best_val=f"{best['val_acc']:.3f}", refresh=False)

    try:
        study = tuning.tune(base, args.trials, args.study, storage=args.storage, search=args.search,
                            seed=None, space=space, graph=graph, pruner=not args.no_pruning,
                            callbacks=[on_trial])
    finally:
        bar.close()
    best = tuning.best_summary(study)
    frame = tuning.trials_frame(study)
    if args.json:
        _print_json({"study": args.study, "storage": databases.display(tuning.storage_url(args.storage)),
                     "best": best, "trials": frame.to_dict(orient="records")})
        return 0
    counts = frame.state.value_counts().to_dict()
    print(f"study {args.study!r} in {databases.display(tuning.storage_url(args.storage))}: "
          + ", ".join(f"{n} {state.lower()}" for state, n in counts.items()))
    if best is None:
        print("no finished trial yet")
        return 0
    keep = (f"p_min={best['p_min']:.3f}, p_max={best['p_max']:.3f} (p_max'={best['p_max_prime']:.3f})"
            if best["p_min"] is not None else f"p={best['p']:.3f}" if best["p"] is not None else "no keep rates")
    print(f"best trial #{best['trial']}: val {_pct(best['val_acc'])}, test {_pct(best['test_acc'])} at {keep}"
          + "".join(f", {k}={best[k]:.3g}" for k in tuning.OPTIONAL_PARAMS if k in best))
    return 0


def cmd_search(args: argparse.Namespace) -> int:
    from dropedge_core.store import ResultStore
    from dropedge_core.studies import cell_search, tuning

    if not 1 <= args.trials <= 1000:
        raise CLIError(f"--trials must be in 1..1000 (got {args.trials})")
    for seed in args.best_seeds:
        if not 0 <= seed <= MAX_SEED:
            raise CLIError(f"--best-seeds must be in 0..{MAX_SEED} (got {seed})")
    bases = [cell_search.cell_base(args.dataset, args.split, args.backbone, layers, sampler, args.recipe)
             for layers in args.layers for sampler in args.samplers]  # every cell checked before any work
    storage = tuning.check_storage(args.storage)  # before any work
    store = ResultStore(args.store)
    graph = _load(bases[0].dataset, bases[0].split)
    rows = []
    for base in bases:
        bar = _progress(args.trials, f"search {cell_search.study_name(base)}", args)
        study = cell_search.search_cell(base, args.trials, storage, graph=graph,
                                        callbacks=[lambda study, trial: bar.update(1)])
        bar.close()
        best = cell_search.best_config(study, base)
        if best is None:
            rows.append({"num_layers": base.num_layers, "sampler": base.sampler, "best_val_acc": None})
            continue
        runs = cell_search.run_best(best, args.best_seeds, store, graph=graph)
        mean, std = _mean_std([r["test_acc"] for r in runs])
        rows.append({"num_layers": base.num_layers, "sampler": base.sampler,
                     "trials": cell_search.trials_done(study), "best_val_acc": study.best_value,
                     "settings": best.settings, "p_min": best.p_min, "p_max": best.p_max, "p": best.p,
                     "seeds": len(runs), "test_acc_mean": mean, "test_acc_std": std})
        if not args.json:
            print(f"L={base.num_layers:<3} {base.sampler:<11} best val {_pct(study.best_value)}  "
                  f"test {_pct(mean)} ± {100 * (std or 0):.1f} over {len(runs)} seeds  {best.settings}",
                  flush=True)
    if args.json:
        _print_json({"dataset": bases[0].dataset, "split": bases[0].split, "backbone": bases[0].backbone,
                     "storage": databases.display(tuning.storage_url(storage)), "store": str(store.path),
                     "cells": rows})
    return 0


COMMANDS = {"datasets": cmd_datasets, "train": cmd_train, "men": cmd_men, "sweep": cmd_sweep,
            "tune": cmd_tune, "search": cmd_search}


def _set_threads(args: argparse.Namespace) -> None:
    """``--threads``, else ``$DROPEDGE_TORCH_THREADS`` (checked with every other variable of
    :mod:`dropedge_core.env`, once, here), bounded by :data:`env.MAX_THREADS`."""
    settings = env.settings()
    threads = getattr(args, "threads", None)
    threads = settings.torch_threads if threads is None else env.parse_threads(threads)
    torch.set_num_threads(threads)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the exit code (0 ok, 2 bad input, 130 interrupted)."""
    args = build_parser().parse_args(argv)
    try:
        if args.command != "datasets":
            _set_threads(args)
        return COMMANDS[args.command](args)
    except KeyboardInterrupt:
        sys.stderr.write("error: interrupted\n")
        return 130
    except ValueError as exc:  # DatasetError, SamplerError, NormalizationError, ConfigError, ...
        message = " ".join(str(exc).split()) or type(exc).__name__
        sys.stderr.write(f"error: {message}\n")
        return 2


__all__ = ["CLIError", "ConfigError", "build_parser", "main", "make_config"]
