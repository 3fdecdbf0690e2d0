"""The argument parser: every subcommand, its flags and their help."""
from __future__ import annotations

import argparse
import sys

from dropedge_core import datasets, metrics, samplers
from dropedge_core.models import BACKBONES
from dropedge_core.normalization import METHODS

from dropedge_explorer.cli import _export as export
from dropedge_explorer.cli import _reproduce as reproduce
from dropedge_explorer.cli._common import (
    DEFAULT_DATASET,
)
from dropedge_explorer.data import presets
from dropedge_explorer.sweep_workers import DEFAULT_LEASE
from dropedge_explorer.training import (
    recipes,
)


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
                        "weight decay, Loop on, 200-400 epochs; APPNP* keeps the shallow settings), "
                        "quick (the shallow settings at every "
                        "depth), paper (the paper's best hyperparameters and depth for "
                        "dataset/split/backbone) or authors (the authors' scripts: their presets, "
                        "epochs, checkpoint rule, directed sampling and models; cora/citeseer)"),
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
                   help="batch normalisation (recipe: off; on for ResGCN beyond 16 layers, and "
                        "with --recipe paper for ResGCN and JKNet from 16 layers)")
    g.add_argument("--alpha", type=float, default=None, help="APPNP* teleport coefficient (recipe: 0.1)")
    g.add_argument("--diag-every", type=int, default=None,
                   help="diagnostics (MEN, layer distances, ...) every k epochs, 0 = off (default 10)")
    g.add_argument("--device", default=None, help="auto (CUDA if available) | cpu | cuda (default auto)")
    g.add_argument("--preset", default=None, choices=presets.PRESETS,
                   help="--preset paper is --recipe paper")
    g.add_argument("--seeds", type=int, nargs="+", default=[0], help="seeds, one run each (default 0)")


def _add_cell_flags(p: argparse.ArgumentParser) -> None:
    """``--dataset --backbone --layers --sampler``: the one configuration of ``train``/``tune``."""
    p.add_argument("--dataset", default=None, help=f"{', '.join(datasets.NAMES)} (default cora)")
    p.add_argument("--backbone", default="gcn", help=f"{', '.join(BACKBONES)} (default gcn)")
    p.add_argument("--layers", type=int, default=None,
                   help="number of layers L (default 2; the preset's with --recipe paper or authors)")
    p.add_argument("--sampler", default=None, help=f"{', '.join(samplers.NAMES)} (default dropedge++)")


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


def _add_datasets(sub: argparse._SubParsersAction) -> None:
    """``datasets``: which datasets load offline."""
    p = sub.add_parser("datasets", help="list datasets and whether each is available offline",
                       description="List the datasets and where each would load from now.")
    p.add_argument("--json", action="store_true", help="machine-readable output on stdout")


def _add_train(sub: argparse._SubParsersAction) -> None:
    """``train``: one configuration over seeds."""
    p = sub.add_parser("train", help="train one configuration over one or more seeds",
                       description="Train a backbone with an edge sampler; report the test accuracy "
                                   "at the best-validation epoch, per seed and averaged.")
    _add_cell_flags(p)
    _add_run_flags(p)
    p.add_argument("--batch-seeds", action="store_true",
                   help="train the seeds together, weights stacked on a seed dimension (each seed draws "
                        "the masks, weights and dropout of its single run; as many per batch as the "
                        "memory limit holds; not for --recipe authors)")
    p.add_argument("--store", default=None, metavar="PATH|URL",
                   help="also store the runs in this results store (a SQLite file or postgresql://...)")
    _add_upload_flags(p)
    _add_output_flags(p)


def _add_men(sub: argparse._SubParsersAction) -> None:
    """``men``: MEN of samplers by depth (the paper's table)."""
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
    p.add_argument("--sources", type=int, default=metrics.DEFAULT_SOURCES,
                   help=f"source nodes for --estimate (default {metrics.DEFAULT_SOURCES})")
    _add_upload_flags(p)
    _add_output_flags(p)


def _add_sweep(sub: argparse._SubParsersAction) -> None:
    """``sweep``: a grid into the results store, resumable and shared by workers."""
    p = sub.add_parser("sweep", help="depth x sampler x backbone x seeds into the results store (resumable)",
                       description="Train every combination and store each run; runs already in the "
                                   "store are skipped, so an interrupted sweep resumes where it stopped. "
                                   "Each run is claimed before training: sweeps started at once on one "
                                   "store (a PostgreSQL URL for several machines) split the grid. With "
                                   "--batch-seeds the free seeds of a cell train as one batched model.")
    p.add_argument("--datasets", "--dataset", dest="datasets", nargs="+", default=["cora"],
                   help="datasets (default cora)")
    p.add_argument("--backbones", "--backbone", dest="backbones", nargs="+", default=["gcn"],
                   help=f"{', '.join(BACKBONES)} (default gcn)")
    p.add_argument("--samplers", "--sampler", dest="samplers", nargs="+",
                   default=["nodrop", "dropedge", "dropedge++"], help="default nodrop dropedge dropedge++")
    p.add_argument("--layers", type=int, nargs="+", default=None,
                   help="depths (default 2 4 8; with --recipe paper or authors, each preset's own depth)")
    _add_run_flags(p)
    p.add_argument("--store", default=None, metavar="PATH|URL",
                   help="results store: a SQLite file, or postgresql://user@host:port/db for workers on "
                        "several machines (default $DROPEDGE_RESULTS or results/results.sqlite)")
    p.add_argument("--lease", type=float, default=DEFAULT_LEASE, metavar="SECONDS",
                   help="each run is claimed before training and the claim renewed while it trains; "
                        "a claim not renewed for this long (its worker died) is taken over "
                        f"(default {DEFAULT_LEASE:g})")
    p.add_argument("--batch-seeds", action="store_true",
                   help="train the seeds of a cell (every setting but the seed) together, as train "
                        "--batch-seeds does: every free seed of a cell is claimed at once, each seed "
                        "stored as its single run would be, a seed whose claim another worker takes "
                        "over stopped alone; expected faster on a GPU, about the same on a CPU "
                        "(docs/PERFORMANCE.md); not for --recipe authors")
    _add_output_flags(p)


def _add_tune(sub: argparse._SubParsersAction) -> None:
    """``tune``: an Optuna study over the keep rates."""
    p = sub.add_parser("tune", help="Optuna study over p_min / p_max' (and lr, dropout, weight decay)",
                       description="Search the keep rates (the paper's p_min and p_max') with Optuna, "
                                   "maximising validation accuracy; report the best trial's test "
                                   "accuracy. Workers started with the same --storage and --study "
                                   "share one study.")
    _add_cell_flags(p)
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


def _add_search(sub: argparse._SubParsersAction) -> None:
    """``search``: the per-cell search and its best cells' seeds."""
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
    p.add_argument("--layers", type=int, nargs="+", default=[8, 16, 32, 64],
                   help="depths (default 8 16 32 64)")
    p.add_argument("--samplers", nargs="+", default=["nodrop", "dropedge", "dropedge++"],
                   help="default nodrop dropedge dropedge++")
    # the authors recipe fixes its depth per preset and never stops early: not a search's start
    p.add_argument("--recipe", default="depth", choices=[r for r in recipes.RECIPES if r != "authors"],
                   help="the starting point (default depth)")
    p.add_argument("--trials", type=int, default=12,
                   help="trials per cell, pruned ones included (default 12)")
    p.add_argument("--best-seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4],
                   help="seeds each cell's best is trained on (default 0 1 2 3 4)")
    p.add_argument("--batch-seeds", action="store_true",
                   help="train a cell's --best-seeds together, as train --batch-seeds does (the "
                        "trials stay single runs); expected faster on a GPU, about the same on a CPU")
    p.add_argument("--storage", default=None,
                   help="Optuna storage URL or SQLite file (default $DROPEDGE_TUNING_STORAGE or "
                        "results/tuning.sqlite)")
    p.add_argument("--store", default=None, metavar="PATH|URL",
                   help="results store for the best runs "
                        "(default $DROPEDGE_RESULTS or results/results.sqlite)")
    _add_output_flags(p)


def build_parser() -> argparse.ArgumentParser:
    """The command line: one subcommand per study, each with its flags and their help."""
    parser = _Parser(prog="python -m dropedge_core",
                     description="DropEdge++ Explorer: samplers, MEN and deep-GCN training "
                                 "(Structure-Aware DropEdge, the paper's method).")
    sub = parser.add_subparsers(dest="command",
                                metavar="{datasets,train,men,sweep,tune,search,reproduce,export}")
    sub.required = True
    _add_datasets(sub)
    _add_train(sub)
    _add_men(sub)
    _add_sweep(sub)
    _add_tune(sub)
    _add_search(sub)
    reproduce.add_parser(sub, _add_output_flags)
    export.add_parser(sub, _add_output_flags)
    return parser
