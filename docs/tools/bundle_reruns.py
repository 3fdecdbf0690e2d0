"""Bring runs of a results store into the bundled run files, pinned (issue 34, item 3):

    python docs/tools/bundle_reruns.py STORE [STORE ...] [--into FILE] [--dry-run]
    python docs/tools/bundle_reruns.py --backfill [--dry-run]

Every run of today's stream in the stores joins each bundled file (``dropedge_explorer/assets/results/``,
``assets/ablation/``, ``assets/search/cell_best_*.csv``) that holds a row of the same config
(a re-run of an older-stream row: the old row stays, labelled) or of the same cell (the same
config but the seed: more seeds of a cell the file holds). A new row gets
the file's columns (and the fingerprint columns), its stream and the fingerprint its store
holds from training (issue 47); a run whose stored ``masks_fp``, ``init_fp`` or
``run_masks_fp`` is not what this code computes is refused (exit 2, naming it: another code made
it), cells the store lacks (a run trained before schema 4) are computed now. A run already in
the file (by key) is left as it is. ``--into FILE`` (a bundled file's name) also adds there the
runs of new cells, those that join no file. Prints what each file gained.

``--backfill`` fills, in every bundled file, the ``run_masks_fp`` of each row of today's stream
that has none (computed by sampling its ``epochs_run`` epochs; no training) and adds the
fingerprint columns a file lacks (``dropout_fp``/``final_fp`` stay empty: only training
records them); a stored digest that differs is refused as above.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import pandas as pd

from dropedge_explorer import paths
from dropedge_explorer.store import ResultStore, run_key
from dropedge_explorer.studies import fingerprints, run_tables as runs
from dropedge_explorer.training import TrainConfig

ASSETS = Path(paths.BUNDLED_RESULTS_DIR).parent
DTYPES = {"key": str, "settings": str, **{c: str for c in runs.PRINT_COLUMNS}}


def bundled_paths() -> list[Path]:
    """Every bundled run file: the depth runs, the ablation, the search's best points."""
    return [*runs.bundled_files(), *sorted((ASSETS / "ablation").glob("*.csv")),
            *sorted((ASSETS / "search").glob("cell_best_*.csv"))]


def store_rows(locations: list[str]) -> tuple[pd.DataFrame, dict]:
    """Today's-stream runs of the stores in the run CSV format, and each key's config."""
    frames, configs = [], {}
    for location in locations:
        store = ResultStore(location)
        frame = runs.current(runs.store_runs(store))
        for key in frame["key"]:
            configs[key] = TrainConfig.from_dict(store.get(key)["config"])
        frames.append(frame)
    every = pd.concat(frames, ignore_index=True).drop_duplicates("key") if frames else runs.empty_runs()
    return every, configs


def _cell_of(config: TrainConfig) -> str:
    """A config without its seed (and what does not change a run): the cell it is a seed of."""
    values = config.to_dict()
    for name in ("seed", "diag_every", "device"):
        values.pop(name)
    return json.dumps(values, sort_keys=True)


def _joining(file_rows: pd.DataFrame, new: pd.DataFrame, configs: dict) -> pd.DataFrame:
    """The store runs that belong in a file: re-runs of its rows' configs, or more seeds of a
    cell it holds (the same config but the seed: keep rates, kernel and direction included);
    not already in it."""
    have = set(file_rows["key"])
    rebuilt = [fingerprints.row_config(r) for _, r in file_rows.iterrows()]
    today_keys = {run_key(c) for c in rebuilt}
    cells = {_cell_of(c) for c in rebuilt}
    in_cell = new["key"].map(lambda k: _cell_of(configs[k]) in cells)
    take = (new["key"].isin(today_keys) | in_cell) & ~new["key"].isin(have)
    return new[take]


def _with_print_columns(columns: list[str]) -> list[str]:
    return [*columns, *(c for c in runs.PRINT_COLUMNS if c not in columns)]


def _as_file_rows(rows: pd.DataFrame, columns: list[str], configs: dict) -> pd.DataFrame:
    """``rows`` (run CSV format) in a file's columns, config columns filled from each config;
    the stored fingerprint checked against this code's (refused when it differs), the cells
    it lacks computed."""
    out = fingerprints.checked(rows, [configs[k] for k in rows["key"]], refuse=True)
    for name in columns:
        if name not in out:
            out[name] = [getattr(configs[k], name) for k in rows["key"]]
    return out[columns]


def backfill(file_rows: pd.DataFrame) -> tuple[pd.DataFrame, int]:
    """``file_rows`` with the fingerprint columns it lacks added and ``run_masks_fp`` computed
    for its rows of today's stream that have none; returns it and the number of rows filled."""
    out = file_rows.copy()
    for name in runs.PRINT_COLUMNS:
        out[name] = out[name].fillna("").astype(str) if name in out else ""
    todo = fingerprints.current(out)
    todo = todo[todo["run_masks_fp"] == ""]
    if len(todo):
        done = fingerprints.checked(todo, refuse=True)
        for name in fingerprints.COMPUTABLE:
            out.loc[done.index, name] = done[name]
    return out, len(todo)


#: Rough sampling cost of an epoch per sampler, relative to DropEdge++ (CPU, Cora, 8 layers).
_SAMPLER_COST = {"nodrop": 0.1, "dropedge": 2.0, "dropedge++": 1.0, "fd": 8.0,
                 "li": 25.0, "lid": 25.0, "ldd": 25.0}


def _cost(path: Path) -> float:
    """A file's sampling work for ``--backfill``: its rows' epochs by sampler cost."""
    df = pd.read_csv(path, usecols=["sampler", "epochs_run"])
    return float((df["epochs_run"] * df["sampler"].map(_SAMPLER_COST).fillna(25.0)).sum())


def _backfill_all(dry_run: bool) -> None:
    for path in sorted(bundled_paths(), key=_cost):  # each file written as it ends, cheapest first
        file_rows = pd.read_csv(path, dtype=DTYPES)
        out, filled = backfill(file_rows)
        print(f"{path.relative_to(ASSETS.parent.parent)}: run_masks_fp computed for {filled} row(s)",
              flush=True)
        if not dry_run and (filled or list(out.columns) != list(file_rows.columns)):
            out.to_csv(path, index=False)


def _into_path(name: str, paths_: list[Path], parser: argparse.ArgumentParser) -> Path:
    """The bundled file named ``name`` (its file name, or its path under the assets)."""
    found = [p for p in paths_ if name in (p.name, str(p.relative_to(ASSETS)))]
    if not found:
        parser.error(f"--into {name[:200]!r}: not a bundled run file; one of "
                     + ", ".join(str(p.relative_to(ASSETS)) for p in paths_))
    return found[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("stores", nargs="*", help="results stores (SQLite files or postgresql:// URLs)")
    parser.add_argument("--dry-run", action="store_true", help="say what each file would gain; write nothing")
    parser.add_argument("--into", metavar="FILE",
                        help="a bundled file's name (authors_presets.csv): also add there the runs "
                             "of cells no file holds")
    parser.add_argument("--backfill", action="store_true",
                        help="compute the missing run_masks_fp of every bundled row (sampling only)")
    args = parser.parse_args()
    if args.backfill:
        return _backfill_all(args.dry_run)
    if not args.stores:
        parser.error("give one or more results stores, or --backfill")
    paths_ = bundled_paths()
    into = _into_path(args.into, paths_, parser) if args.into else None
    new, configs = store_rows(args.stores)
    files = {path: pd.read_csv(path, dtype=DTYPES) for path in paths_}
    gains = {path: _joining(rows, new, configs) for path, rows in files.items()}
    if into is not None:  # the runs of new cells, which join no file, go into the named one
        joined = set().union(*(set(g["key"]) for g in gains.values()))
        have = set(files[into]["key"])
        rest = new[~new["key"].isin(joined | have)]
        gains[into] = pd.concat([gains[into], rest], ignore_index=True).drop_duplicates("key")
    for path in paths_:
        file_rows, gain = files[path], gains[path]
        if gain.empty:
            continue
        file_rows, _ = backfill(file_rows) if "run_masks_fp" not in file_rows else (file_rows, 0)
        try:
            added = _as_file_rows(gain, _with_print_columns(list(file_rows.columns)), configs)
        except fingerprints.FingerprintError as exc:
            print(f"bundle_reruns: {path.name}: {exc}", file=sys.stderr)
            raise SystemExit(2) from None
        print(f"{path.relative_to(ASSETS.parent.parent)}: +{len(added)} run(s) "
              + ", ".join(f"{k[0]} {k[1]} L={k[2]} ({len(g)})"
                          for k, g in added.groupby(["dataset", "sampler", "layers"])))
        if not args.dry_run:
            merged = pd.concat([file_rows, added], ignore_index=True)
            sort = [c for c in ("dataset", "split", "backbone", "sampler", "layers", "p_min", "p_max",
                                "directed", "stream", "seed") if c in merged]
            merged = merged.sort_values(sort, key=runs.display_order, kind="stable")
            merged.to_csv(path, index=False)


if __name__ == "__main__":
    main()
