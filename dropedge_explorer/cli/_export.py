"""``export``: the results store's runs as a file — the run CSV format the app bundles
(:func:`~dropedge_explorer.studies.run_tables.export_runs`, fingerprints included) or every column as
CSV or parquet (:func:`~dropedge_explorer.studies.run_tables.export_table`)."""
from __future__ import annotations

import argparse
from pathlib import Path

from dropedge_core.echo import bounded

from dropedge_explorer import databases, paths
from dropedge_explorer.cli._common import print_json
from dropedge_explorer.studies.run_tables import ResultsError, export_runs, export_table


def cmd_export(args: argparse.Namespace) -> int:
    from dropedge_explorer.store import ResultStore

    out = Path(args.output).expanduser()
    if out.exists() and not out.is_file():
        raise ResultsError(f"{args.output!r} exists and is not a file; give a file name to write")
    if not args.all_columns and out.suffix.lower() != ".csv":
        raise ResultsError(f"the run CSV format is a .csv file; got {args.output!r} (--all-columns also "
                           "writes .parquet)")
    location = args.store or paths.results_store()
    if "://" not in str(location) and not Path(location).expanduser().is_file():
        raise ResultsError(f"no results store at {str(location)!r}; give --store")
    _refuse_own_source(out, args.output, location)  # before the store is opened or the output written
    store = ResultStore.for_reading(location)  # an empty file or database: no table created
    if store is None:
        raise ResultsError(f"results store {bounded(str(location))} holds no runs (an empty file or "
                           "database); nothing to export, nothing was changed")
    try:
        path = export_table(store, out) if args.all_columns else export_runs(store, out)
    except OSError as exc:
        raise ResultsError(f"cannot write {str(out)!r}: {exc.strerror or exc}") from None
    if args.json:
        print_json({"store": str(store.path), "output": str(path), "runs": len(store)})
    else:
        print(f"{len(store)} run(s) of {store.path} -> {path}")
    return 0


def _refuse_own_source(out: Path, given: str, location) -> None:
    """Refuse an output that is the store's own file, by any of its names (a relative path,
    ``sqlite:///``, a symlink, a hard link): writing it would replace the store."""
    store_file = databases.sqlite_path(location)
    if store_file is None or not out.exists():
        same = store_file is not None and store_file.expanduser().resolve() == out.resolve()
    else:
        try:
            same = store_file.expanduser().exists() and out.samefile(store_file.expanduser())
        except OSError:
            same = False
    if same:
        raise ResultsError(f"the output {bounded(given)} is the results store it reads "
                           f"({bounded(str(location))}); nothing was written: give another output file")


def add_parser(sub: argparse._SubParsersAction, output_flags) -> None:
    """``export``: the results store as a file."""
    p = sub.add_parser("export", help="write the results store's runs to a file (the run CSV format, "
                                      "or every column)",
                       description="Write every run of the results store to OUTPUT: by default in the "
                                   "run CSV format the app bundles (dropedge_explorer/assets/results/), each "
                                   "run of today's sampler stream with its fingerprint; with "
                                   "--all-columns every config and metric column, as .csv or .parquet.")
    p.add_argument("output", help="the file to write (.csv; .parquet with --all-columns)")
    p.add_argument("--store", default=None, metavar="PATH|URL",
                   help="results store (default $DROPEDGE_RESULTS or results/results.sqlite)")
    p.add_argument("--all-columns", action="store_true",
                   help="every column of the store (config, metrics), .csv or .parquet")
    output_flags(p)


