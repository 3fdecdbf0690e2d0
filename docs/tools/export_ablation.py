"""Write the bundled ablation runs (issue 25 item 4: why DropEdge++ trails DropEdge at 32 layers on
Cora semi, GCN, depth recipe) from a results store, beside the bundled depth runs of the same
cell (NoDrop, DropEdge, DropEdge++ at the recipe's keep rates):

    python docs/tools/export_ablation.py STORE [STORE ...]

Writes ``dropedge_explorer/assets/ablation/gcn32_cora_semi.csv``: one row per run with the keep rates
(``p_min``, ``p_max``, ``p``: the bundled depth CSVs leave them out, as every run there has the
recipe's), ``directed``, the seed, the accuracies and the store key. A run is taken once (by key).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import pandas as pd

from dropedge_explorer import paths
from dropedge_explorer.store import ResultStore
from dropedge_explorer.studies import run_tables as bundled

CELL = {"dataset": "cora", "split": "semi", "backbone": "gcn", "layers": 32}
OUT = Path(paths.BUNDLED_RESULTS_DIR).parent / "ablation" / "gcn32_cora_semi.csv"
COLUMNS = ["dataset", "split", "backbone", "layers", "sampler", "p_min", "p_max", "p", "directed", "seed",
           "test_acc", "best_val_acc", "epochs_run", "key"]
#: The depth recipe's keep rates (``TrainConfig`` defaults): the bundled depth runs have these.
RECIPE_RATES = {"p_min": 0.3, "p_max": 0.8, "directed": False}


def from_store(location: str) -> pd.DataFrame:
    frame = ResultStore(location).to_frame()
    frame = frame.rename(columns={"num_layers": "layers"})
    keep = frame[(frame["dataset"] == CELL["dataset"]) & (frame["split"] == CELL["split"])
                 & (frame["backbone"] == CELL["backbone"]) & (frame["layers"] == CELL["layers"])
                 & (frame["recipe"] == "depth") & (frame["reason"] != "error")]
    return keep[COLUMNS]


def from_bundled() -> pd.DataFrame:
    every = bundled.bundled_results()
    part = every[(every["dataset"] == CELL["dataset"]) & (every["split"] == CELL["split"])
                 & (every["backbone"] == CELL["backbone"]) & (every["layers"] == CELL["layers"])
                 & (every["settings"] == "depth")].copy()
    for name, value in RECIPE_RATES.items():
        part[name] = value
    part["p"] = float("nan")  # the sampler's default: (p_min + p_max) / 2
    return part[COLUMNS]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("stores", nargs="+", help="results stores holding the ablation's runs")
    args = parser.parse_args()
    frames = [from_bundled(), *(from_store(s) for s in args.stores)]
    out = pd.concat(frames, ignore_index=True).drop_duplicates("key")
    out = out.sort_values(["sampler", "p_min", "p_max", "directed", "seed"], kind="stable")
    OUT.parent.mkdir(parents=True, exist_ok=True)
    out.to_csv(OUT, index=False)
    print(out.groupby(["sampler", "p_min", "p_max", "directed"], dropna=False)["test_acc"]
          .agg(["count", "mean", "std"]).round(3).to_string())
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
