"""Make the bundled class-merging snapshots (``dropedge_explorer/assets/snapshots/*.npz``).

Trains a GCN once per sampler (NoDrop, DropEdge, DropEdge++) and stores every hidden layer's
2-D picture (:func:`dropedge_explorer.studies.teaching.class_picture`), the class separation, the
subspace distance and the silhouette per layer, the test accuracies, the settings and each
run's stream fingerprint (:func:`dropedge_explorer.studies.teaching.save_snapshots`; read back
with ``load_snapshots(...).settings``). ``tests/studies/test_teaching_snapshots.py`` recomputes
the fingerprints at the code that ships: a file of an older stream fails it.

The two bundled files were made with (2-core CPU, no GPU, 6-7 CPU-minutes each)::

    DROPEDGE_DATA=/work/shared/data python bench/make_snapshots.py \
        --dataset cora --split semi --layers 16 --epochs 300 --p-min 0.3 --p-max 0.8 --seed 0 \
        --out dropedge_explorer/assets/snapshots/cora_semi_gcn16.npz

and the same with ``--recipe old-defaults``
``--out dropedge_explorer/assets/snapshots/cora_semi_gcn16_old_defaults.npz`` (lr 0.01, dropout
0.5, weight decay 5e-4, no self-feature term). The training is deterministic on a CPU: a rerun
writes the same numbers.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import torch  # noqa: E402
from dropedge_core import datasets  # noqa: E402

from dropedge_explorer.studies import teaching
from dropedge_explorer.training import TrainConfig  # noqa: E402


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
    ap.add_argument("--samplers", nargs="+", default=list(teaching.VIEW_SAMPLERS))
    ap.add_argument("--out", default=None, help="default: the bundled file of the recipe")
    args = ap.parse_args(argv)
    torch.set_num_threads(1)
    graph = datasets.load(args.dataset, split=args.split)
    base = TrainConfig(dataset=args.dataset, split=args.split, backbone="gcn", num_layers=args.layers,
                       p_min=args.p_min, p_max=args.p_max, epochs=args.epochs, patience=0,
                       seed=args.seed, diag_every=0, device="cpu", **teaching.RECIPES[args.recipe])
    t0 = time.perf_counter()
    snaps = teaching.class_snapshots(graph, base, args.samplers,
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
