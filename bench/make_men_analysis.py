"""Make the bundled MEN analysis (``dropedge_explorer/assets/snapshots/men_analysis_cora_gcn16.csv``): the
paper's MEN figure (MEN against the validation loss and the "Distance" of a 16-layer
Cora GCN, across DropEdge / LI / LID / LDD), with the deep recipe
(:data:`dropedge_explorer.studies.teaching.DEEP_RECIPE`) and the keep rates of the paper's MEN table
(p_min 0.05, p_max 1.0; DropEdge at their mean, 0.525).

The bundled file was made with (2-core CPU, no GPU)::

    DROPEDGE_DATA=/work/shared/data python bench/make_men_analysis.py --layers 16 --epochs 300 \\
        --diag-every 25 --seeds 0
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import torch  # noqa: E402
from dropedge_core import datasets  # noqa: E402

from dropedge_explorer.studies import paper_views, teaching
from dropedge_explorer.training import TrainConfig  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dataset", default="cora")
    ap.add_argument("--split", default="semi")
    ap.add_argument("--layers", type=int, default=16)
    ap.add_argument("--epochs", type=int, default=300)
    ap.add_argument("--diag-every", type=int, default=25)
    ap.add_argument("--p-min", type=float, default=0.05)
    ap.add_argument("--p-max", type=float, default=1.0)
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1])
    ap.add_argument("--out", default=str(paper_views.MEN_ANALYSIS_FILE))
    args = ap.parse_args(argv)
    torch.set_num_threads(1)
    graph = datasets.load(args.dataset, split=args.split)
    base = TrainConfig(dataset=args.dataset, split=args.split, backbone="gcn", num_layers=args.layers,
                       p_min=args.p_min, p_max=args.p_max, epochs=args.epochs, patience=0,
                       diag_every=args.diag_every, device="cpu", **teaching.DEEP_RECIPE)
    t0 = time.perf_counter()
    df = paper_views.men_analysis_runs(graph, base, seeds=args.seeds,
                                       progress=lambda s: print(f"training {s} ...", flush=True))
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    df.to_csv(out, index=False, float_format="%.6g")
    print(df.to_string(index=False))
    print(f"wrote {out} in {time.perf_counter() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
