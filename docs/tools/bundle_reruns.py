"""Bring runs of a results store into the bundled run files, pinned (issue 34, item 3):

    python docs/tools/bundle_reruns.py STORE [STORE ...] [--dry-run]

Every run of today's stream in the stores joins each bundled file (``dropedge_core/assets/results/``,
``assets/ablation/``, ``assets/search/cell_best_*.csv``) that holds a row of the same config
(a re-run of an older-stream row: the old row stays, labelled) or of the same cell (the same
config but the seed: more seeds of a cell the file holds). A new row gets
the file's columns, its stream and its fingerprint computed now; a run already in the file (by
key) is left as it is. Prints what each file gained.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import pandas as pd

from dropedge_core import paths
from dropedge_core.store import ResultStore, run_key
from dropedge_core.studies import fingerprints, run_tables as runs
from dropedge_core.training import TrainConfig

ASSETS = Path(paths.BUNDLED_RESULTS_DIR).parent
DTYPES = {"key": str, "settings": str, "masks_fp": str, "init_fp": str}


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


def _as_file_rows(rows: pd.DataFrame, columns: list[str], configs: dict) -> pd.DataFrame:
    """``rows`` (run CSV format) in a file's columns, config columns filled from each config."""
    out = fingerprints.fingerprint_rows(rows, [configs[k] for k in rows["key"]])
    for name in columns:
        if name not in out:
            out[name] = [getattr(configs[k], name) for k in rows["key"]]
    return out[columns]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("stores", nargs="+", help="results stores (SQLite files or postgresql:// URLs)")
    parser.add_argument("--dry-run", action="store_true", help="say what each file would gain; write nothing")
    args = parser.parse_args()
    new, configs = store_rows(args.stores)
    for path in bundled_paths():
        file_rows = pd.read_csv(path, dtype=DTYPES)
        gain = _joining(file_rows, new, configs)
        if gain.empty:
            continue
        added = _as_file_rows(gain, list(file_rows.columns), configs)
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
