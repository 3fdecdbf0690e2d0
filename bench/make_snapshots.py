"""Make the bundled class-merging snapshots (``dropedge_core/assets/snapshots/*.npz``).

Trains a GCN once per sampler (NoDrop, DropEdge, DropEdge++) with the deep recipe
(:data:`dropedge_core.studies.teaching.DEEP_RECIPE`: lr 1e-3, dropout 0, weight decay 0, the
self-feature term, hidden 128, AN) and stores every hidden layer's 2-D projection, the
silhouette and the subspace distance per layer (:func:`dropedge_core.studies.teaching.save_snapshots`).
The settings are stored inside the file (``load_snapshots(...).settings``).

The bundled files were made with (2-core CPU, no GPU)::

    DROPEDGE_DATA=/work/shared/data python bench/make_snapshots.py \
        --dataset cora --split semi --layers 16 --epochs 300 --p-min 0.3 --p-max 0.8 --seed 0 \
        --out dropedge_core/assets/snapshots/cora_semi_gcn16.npz

the same with ``--recipe old-defaults``
``--out dropedge_core/assets/snapshots/cora_semi_gcn16_old_defaults.npz``
(lr 0.01, dropout 0.5, weight decay 5e-4, no self-feature term: the settings under which a
16-layer GCN does not learn), and the 8-layer views under the shallow settings::

    DROPEDGE_DATA=/work/shared/data python bench/make_snapshots.py --layers 8 --epochs 200 \
        --recipe old-defaults --seed 1 --out dropedge_core/assets/snapshots/cora_semi_gcn8_shallow_seed1.npz

and the same with ``--seed 0 --out .../cora_semi_gcn8_shallow_seed0.npz``; the 32-layer one::

    DROPEDGE_DATA=/work/shared/data python bench/make_snapshots.py --layers 32 --epochs 200 \
        --seed 0 --out dropedge_core/assets/snapshots/cora_semi_gcn32.npz

The training is
deterministic on a CPU: a rerun writes the same numbers (checked for both 16-layer files:
the silhouettes and accuracies came back identical).
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import torch  # noqa: E402

from dropedge_core import datasets  # noqa: E402
from dropedge_core.studies import teaching
from dropedge_core.training import TrainConfig  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dataset", default="cora")
    ap.add_argument("--split", default="semi")
    ap.add_argument("--layers", type=int, default=16)
    ap.add_argument("--epochs", type=int, default=300)
    ap.add_argument("--p-min", type=float, default=0.3)
    ap.add_argument("--p-max", type=float, default=0.8)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--recipe", default="deep", choices=list(teaching.RECIPES))
    ap.add_argument("--fit", default="all", choices=teaching.FIT_CHOICES)
    ap.add_argument("--samplers", nargs="+", default=list(teaching.VIEW_SAMPLERS))
    ap.add_argument("--out", default=None, help="default: the bundled file of the recipe")
    args = ap.parse_args(argv)
    torch.set_num_threads(1)
    graph = datasets.load(args.dataset, split=args.split)
    base = TrainConfig(dataset=args.dataset, split=args.split, backbone="gcn", num_layers=args.layers,
                       p_min=args.p_min, p_max=args.p_max, epochs=args.epochs, patience=0,
                       seed=args.seed, diag_every=0, device="cpu", **teaching.RECIPES[args.recipe])
    t0 = time.perf_counter()
    snaps = teaching.class_snapshots(graph, base, args.samplers, fit=args.fit,
                                     progress=lambda s: print(f"training {s} ...", flush=True))
    out = args.out or (teaching.BUNDLED_SNAPSHOT if args.recipe == "deep" else teaching.BUNDLED_FAILING)
    path = teaching.save_snapshots(snaps, out)
    for s in snaps.items:
        print(f"{s.sampler:>11}: test {s.test_acc:.3f} (best val epoch), {s.final_test_acc:.3f} (last), "
              f"class separation L1 {s.separation[0]:.3f} -> L{len(s.separation)} {s.separation[-1]:.3f}")
    print(f"wrote {path} ({path.stat().st_size / 1024:.0f} KiB) in {time.perf_counter() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
