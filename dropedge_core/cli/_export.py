"""``export``: the results store's runs as a file — the run CSV format the app bundles
(:func:`~dropedge_core.studies.run_tables.export_runs`, fingerprints included) or every column as
CSV or parquet (:func:`~dropedge_core.studies.run_tables.export_table`)."""
from __future__ import annotations

import argparse
from pathlib import Path

from dropedge_core import paths
from dropedge_core.cli._common import print_json
from dropedge_core.studies.run_tables import ResultsError, export_runs, export_table


def cmd_export(args: argparse.Namespace) -> int:
    from dropedge_core.store import ResultStore

    out = Path(args.output).expanduser()
    if out.exists() and not out.is_file():
        raise ResultsError(f"{args.output!r} exists and is not a file; give a file name to write")
    if not args.all_columns and out.suffix.lower() != ".csv":
        raise ResultsError(f"the run CSV format is a .csv file; got {args.output!r} (--all-columns also "
                           "writes .parquet)")
    location = args.store or paths.results_store()
    if "://" not in str(location) and not Path(location).expanduser().is_file():
        raise ResultsError(f"no results store at {str(location)!r}; give --store")
    store = ResultStore(location)
    try:
        path = export_table(store, out) if args.all_columns else export_runs(store, out)
    except OSError as exc:
        raise ResultsError(f"cannot write {str(out)!r}: {exc.strerror or exc}") from None
    if args.json:
        print_json({"store": str(store.path), "output": str(path), "runs": len(store)})
    else:
        print(f"{len(store)} run(s) of {store.path} -> {path}")
    return 0


def add_parser(sub: argparse._SubParsersAction, output_flags) -> None:
    """``export``: the results store as a file."""
    p = sub.add_parser("export", help="write the results store's runs to a file (the run CSV format, "
                                      "or every column)",
                       description="Write every run of the results store to OUTPUT: by default in the "
                                   "run CSV format the app bundles (dropedge_core/assets/results/), each "
                                   "run of today's sampler stream with its fingerprint; with "
                                   "--all-columns every config and metric column, as .csv or .parquet.")
    p.add_argument("output", help="the file to write (.csv; .parquet with --all-columns)")
    p.add_argument("--store", default=None, metavar="PATH|URL",
                   help="results store (default $DROPEDGE_RESULTS or results/results.sqlite)")
    p.add_argument("--all-columns", action="store_true",
                   help="every column of the store (config, metrics), .csv or .parquet")
    output_flags(p)


