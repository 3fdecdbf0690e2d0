"""``reproduce``: one of the paper's depth tables, regenerated from missing runs to verdicts
(:mod:`dropedge_explorer.studies.reproduce`)."""
from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

from dropedge_core.echo import bounded

from dropedge_explorer import paths
from dropedge_explorer.cli._common import CLIError, load_dataset, print_json, progress_bar
from dropedge_explorer.studies import ordering
from dropedge_explorer.studies import reproduce as rep
from dropedge_explorer.studies.sweep import train_and_store, train_seeds_and_store
from dropedge_explorer.training import device_name, resolve_device
from dropedge_explorer.training.checks import check_memory

LABELS = {"nodrop": "NoDrop", "dropedge": "DropEdge", "dropedge++": "DropEdge++"}


def _store(args: argparse.Namespace, dry_run: bool):
    """The results store; on a dry run ``None`` when there is none yet (no file, a 0-byte
    file, an empty database): a dry run creates nothing, not even the store's tables."""
    from dropedge_explorer.store import ResultStore

    location = args.store or paths.results_store()
    return ResultStore.for_reading(location) if dry_run else ResultStore(location)


def _duration(seconds: float) -> str:
    minutes = seconds / 60
    if seconds < 120:
        return f"{seconds:.0f} s"
    return f"{minutes:.0f} min" if minutes < 120 else f"{minutes / 60:.1f} h"


def _dry_run(args, table, cells, graph, runs) -> int:
    measured: dict[tuple, float] = {}

    def epoch_seconds(config) -> float:
        cell = (config.backbone, config.num_layers, config.sampler)
        if cell not in measured:
            measured[cell] = rep.measure_epoch(config, graph)
        return measured[cell]

    plan = rep.estimate_seconds(cells, runs, epoch_seconds)
    device = device_name(resolve_device(args.device))
    total = float(plan["seconds"].sum()) if len(plan) else 0.0
    gpu = rep.estimate_seconds(cells, runs, rep.gpu_epoch_seconds)
    gpu_total = float(gpu["seconds"].sum()) if len(gpu) else 0.0
    if args.json:
        print_json({"table": table.name, "device": device, "cells": plan.to_dict(orient="records"),
                    "runs": int(plan["seeds"].sum()) if len(plan) else 0, "seconds": total,
                    "gpu_seconds_estimate": gpu_total})
        return 0
    print(f"{table.name}: {int(plan['seeds'].sum()) if len(plan) else 0} runs missing in {len(plan)} "
          f"cells; estimated {_duration(total)} on {device} (seconds per epoch measured now, 3 epochs "
          f"per cell; epochs per run: the bundled runs' mean, else the recipe's budget)")
    if len(plan) and resolve_device(args.device).type == "cpu":
        print(f"  on an H200-class GPU about {_duration(gpu_total)} as single runs (not measured here: "
              f"{rep.GPU_EPOCH_SECONDS_PER_LAYER * 32:g} s per epoch for a Cora GCN-32 run there, scaled by "
              "depth; batched seeds take less)")
    for row in plan.itertuples():
        print(f"  {row.backbone:<10} L={row.layers:<3} {LABELS[row.sampler]:<11} {row.seeds:>3} seeds "
              f"x {row.epochs:>5.0f} epochs x {row.epoch_s:.4f} s = {_duration(row.seconds)}")
    return 0


def _train(args, cells, graph, store) -> int:
    """Train the missing cells, each stored as it ends; the number of runs trained."""
    for cell in cells:  # a run too big for this device is refused before the first one trains
        check_memory(cell[0], graph)
    bar = progress_bar(sum(len(c) for c in cells), "reproduce", args)
    done = 0
    try:
        for cell in cells:
            c = cell[0]
            bar.set_postfix_str(f"{c.backbone} L={c.num_layers} {c.sampler} seeds={len(cell)}")
            if args.batch_seeds and len(cell) > 1:
                train_seeds_and_store(cell, store, graph)
            else:
                for config in cell:
                    train_and_store(config, store, graph)
            done += len(cell)
            bar.update(len(cell))
    except KeyboardInterrupt:
        bar.close()
        raise CLIError(f"interrupted after {done} run(s), each stored: run the same command again to "
                       f"resume") from None
    bar.close()
    return done


#: The largest ``--doc`` read: docs/REPRODUCTION.md is under 100 KB; a file above this is
#: refused by its size, before a byte of it is read.
MAX_DOC_BYTES = 16 * 2**20

#: What marks a document the generator can regenerate (docs/tools/repro_tables.py's blocks).
DOC_MARKER = "<!-- repro_tables: "


def _doc_plan(args) -> tuple[Path, Path] | str:
    """The document to regenerate and the checkout's generator that does it; or, in words,
    why no document will be regenerated. Checked before anything trains.

    Raises:
        CLIError: ``--doc`` that is not a file holding the generator's blocks.
    """
    tool = paths.REPO / "docs" / "tools" / "repro_tables.py" if paths.REPO is not None else None
    if args.doc is not None:
        doc = Path(args.doc).expanduser()
        if DOC_MARKER not in _doc_text(doc, args.doc):
            raise CLIError(f"--doc {bounded(str(args.doc))}: not a file with '{DOC_MARKER}NAME -->' blocks; "
                           "give docs/REPRODUCTION.md or a copy of it")
    else:
        doc = paths.reproduction_doc()
    if args.bundle_dir is not None and not _same_dir(args.bundle_dir, paths.BUNDLED_RESULTS_DIR):
        return "document not regenerated: it reads the package's bundled files, not --bundle-dir"
    if tool is None or not tool.is_file() or doc is None or not doc.is_file():
        return "document not regenerated: no docs/ in this installation (a checkout has them)"
    return doc, tool


def _doc_text(doc: Path, given: object) -> str:
    """The text of ``--doc`` (empty when it is no file), read only when its size is within
    :data:`MAX_DOC_BYTES`: a larger one is refused by its size, nothing of it read.

    Raises:
        CLIError: a file above the bound, or a name the system refuses (too long).
    """
    try:
        if not doc.is_file():
            return ""
        size = doc.stat().st_size
        if size > MAX_DOC_BYTES:
            raise CLIError(f"--doc {bounded(str(given))} is {size} bytes, above the {MAX_DOC_BYTES} bytes "
                           "a reproduction document may have; give docs/REPRODUCTION.md or a copy of it")
        with open(doc, "rb") as f:  # the bound again: the file may grow after the stat
            return f.read(MAX_DOC_BYTES + 1).decode("utf-8", errors="replace")
    except OSError as e:
        raise CLIError(f"--doc {bounded(str(given))}: cannot read it ({e.strerror or e})") from None


def _same_dir(given: Path, bundled: Path) -> bool:
    try:
        return Path(given).resolve() == bundled.resolve()
    except OSError:  # a name the system refuses is no folder: bundled_runs says so
        return False


def _regenerate_doc(plan: tuple[Path, Path] | str) -> str:
    """Regenerate the document's blocks with the checkout's own generator; what was done."""
    if isinstance(plan, str):
        return plan
    doc, tool = plan
    done = subprocess.run([sys.executable, str(tool), "--write", str(doc)], capture_output=True, text=True)
    if done.returncode != 0:
        raise CLIError(f"regenerating {doc} failed: {(done.stderr.strip().splitlines() or ['?'])[-1]}")
    return f"regenerated {doc}"


def _verdict_lines(table, bundle_dir: Path | None) -> list[str]:
    lines = []
    for row in rep.verdicts(table, bundle_dir).itertuples():
        ci = ("" if row.ci_low != row.ci_low
              else f" (95% CI {100 * row.ci_low:+.1f} to {100 * row.ci_high:+.1f})")
        lines.append(f"  {row.backbone} L={row.layers}: {LABELS[row.better]} >= {LABELS[row.worse]}: "
                     f"{100 * row.diff_mean:+.1f} points{ci}, {row.n} seeds, Holm p "
                     f"{ordering.format_p(row.p_holm)}: {row.verdict}")
    return lines


def cmd_reproduce(args: argparse.Namespace) -> int:
    table = rep.check_table(args.table)
    if args.seeds < 1 or args.seeds > 100:
        raise CLIError(f"--seeds {bounded(args.seeds, quote=False)}: allowed 1 to 100")
    configs = rep.table_configs(table, args.seeds, args.layers, args.device)
    doc_plan = _doc_plan(args)
    rep.bundled_runs(table, args.bundle_dir)  # a bad folder or file refused before the store is opened
    store = _store(args, args.dry_run)
    cells = rep.missing_cells(configs, rep.present_keys(table, store, args.bundle_dir))
    graph = load_dataset(table.dataset, table.split) if cells else None
    if args.dry_run:
        return _dry_run(args, table, cells, graph, rep.bundled_runs(table, args.bundle_dir))
    trained = _train(args, cells, graph, store) if cells else 0
    path, added = rep.bundle(table, store, args.bundle_dir)
    doc = _regenerate_doc(doc_plan) if added else "document unchanged (no run added)"
    verdicts = _verdict_lines(table, args.bundle_dir)  # of the files just bundled to
    if args.json:
        records = rep.verdicts(table, args.bundle_dir).to_dict(orient="records")
        print_json({"table": table.name, "trained": trained, "bundled": str(path), "added": added,
                    "document": doc, "verdicts": records})
        return 0
    print(f"{table.name}: {len(configs)} runs asked for, {trained} trained here -> {store.path}")
    print(f"bundled {path}: {added} row(s) added; {doc}")
    print("verdicts (today's stream, Holm-corrected per claim over the table's depths):")
    print("\n".join(verdicts) if verdicts else "  none: no cell has two samplers with common seeds")
    return 0


def add_parser(sub: argparse._SubParsersAction, output_flags) -> None:
    """``reproduce``: one of the paper's depth tables, from missing runs to verdicts."""
    p = sub.add_parser("reproduce", help="run the missing cells of one of the paper's depth tables, "
                                         "bundle them, regenerate REPRODUCTION.md, print the verdicts",
                       description="Run the missing cells of one of the paper's accuracy-by-depth "
                                   "tables under the depth recipe (the seeds of a cell in one batch), "
                                   "store each cell as it ends (run it again to resume), add the runs "
                                   "to the table's bundled file with their fingerprints, regenerate "
                                   "docs/REPRODUCTION.md and print the table's verdicts.")
    p.add_argument("--table", required=True, help=f"one of: {', '.join(rep.TABLES)}")
    p.add_argument("--seeds", type=int, default=10, help="seeds per cell, 0 .. N-1 (default 10)")
    p.add_argument("--layers", type=int, nargs="+", default=None,
                   help="only these of the paper's depths (default all: 2 4 8 16 32 64)")
    p.add_argument("--device", default="auto", help="auto (default), cpu, cuda or cuda:<index>")
    p.add_argument("--batch-seeds", action=argparse.BooleanOptionalAction, default=True,
                   help="train a cell's seeds as one batched model (default; --no-batch-seeds: one by one)")
    p.add_argument("--dry-run", action="store_true",
                   help="list the missing cells and the estimated time on this device; train nothing")
    p.add_argument("--store", default=None, metavar="PATH|URL",
                   help="results store (default $DROPEDGE_RESULTS or results/results.sqlite)")
    p.add_argument("--bundle-dir", default=None, type=Path, metavar="DIR",
                   help="where the bundled run files are (default the package's assets/results)")
    p.add_argument("--doc", default=None, type=Path,
                   help="the document to regenerate, with the generator's blocks (default "
                        "docs/REPRODUCTION.md of the checkout; regenerated by the checkout's own "
                        "docs/tools/repro_tables.py)")
    output_flags(p)


