"""PyG's own ``GCN(jk="cat")`` trained with DropEdge++ on Cora, its ``forward`` untouched.

:class:`dropedge_core.pyg.LayerWiseEdges` wraps the model: every call in training mode
draws the layers' edges with a :class:`~dropedge_core.pyg.LayerDropEdge` (DropEdge++,
keep 0.3 at the input layer up to 0.8 at the top) and hands ``model.convs[i]`` layer
``i``'s; in eval mode the model sees the whole graph. The same model without DropEdge++
(``sampler="nodrop"``: every layer keeps every edge) is trained beside it from the same
seed. The same wrapper serves ``GraphSAGE`` and ``GAT`` (``--model``), any ``jk``
(``--jk``), and a hand-written ``GCN2Conv`` stack (``LayerWiseEdges(model, drop)``,
``tests/pyg/test_models.py``).

Cora (semi-supervised split), hidden 64, dropout 0.5, Adam lr 0.005, weight decay 5e-4,
test accuracy at the best validation accuracy.

Measured (2026-11-27, the shared 2-core CPU, one thread, ``--seeds 0 --epochs 150``):
with DropEdge++ **79.0%** (best validation 81.0% at epoch 139), without edge dropout
74.2% (76.0% at epoch 77). One seed: a first sign, not a result.

    DROPEDGE_DATA=../shared/data python examples/pyg_models.py [--model gcn|sage|gat]
        [--jk cat|max|last|none] [--layers 8] [--epochs 200] [--seeds 0 1 2]
"""
from __future__ import annotations

import argparse
import statistics

import torch
import torch.nn.functional as F
from dropedge_core import datasets
from dropedge_core.pyg import LayerDropEdge, LayerWiseEdges, to_pyg
from torch_geometric.nn.models import GAT, GCN, GraphSAGE

MODELS = {"gcn": GCN, "sage": GraphSAGE, "gat": GAT}


def fit(data, model_name: str, jk: str | None, layers: int, sampler: str, seed: int, epochs: int) -> dict:
    """Train one wrapped model; the test accuracy at the best validation accuracy."""
    torch.manual_seed(seed)
    model = MODELS[model_name](data.num_features, 64, num_layers=layers, out_channels=int(data.y.max()) + 1,
                               dropout=0.5, jk=jk)
    rates = {"keep_min": 0.3, "keep_max": 0.8} if sampler != "nodrop" else {}
    wrapped = LayerWiseEdges(model, LayerDropEdge(layers, sampler, **rates,
                                                  generator=torch.Generator().manual_seed(seed)))
    optimizer = torch.optim.Adam(wrapped.parameters(), lr=0.005, weight_decay=5e-4)
    best = {"val": -1.0, "test": 0.0, "epoch": 0}
    for epoch in range(1, epochs + 1):
        wrapped.train()
        optimizer.zero_grad()
        out = wrapped(data.x, data.edge_index)
        F.cross_entropy(out[data.train_mask], data.y[data.train_mask]).backward()
        optimizer.step()
        wrapped.eval()
        with torch.no_grad():
            correct = wrapped(data.x, data.edge_index).argmax(1) == data.y
        val, test = (float(correct[mask].float().mean()) for mask in (data.val_mask, data.test_mask))
        if val > best["val"]:
            best = {"val": val, "test": test, "epoch": epoch}
    return best


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", choices=sorted(MODELS), default="gcn")
    ap.add_argument("--jk", choices=["cat", "max", "last", "none"], default="cat")
    ap.add_argument("--layers", type=int, default=8)
    ap.add_argument("--epochs", type=int, default=200)
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    args = ap.parse_args(argv)
    data = to_pyg(datasets.load("cora", split="semi"))
    jk = None if args.jk == "none" else args.jk
    name = f"{MODELS[args.model].__name__}(jk={jk!r}), {args.layers} layers"
    for sampler, label in (("dropedge++", "DropEdge++ keep 0.3->0.8"), ("nodrop", "no edge dropout")):
        tests = []
        for seed in args.seeds:
            best = fit(data, args.model, jk, args.layers, sampler, seed, args.epochs)
            tests.append(best["test"])
            print(f"{name}, {label}: seed {seed}: test {best['test']:.1%} "
                  f"(best val {best['val']:.1%} at epoch {best['epoch']})", flush=True)
        print(f"{name}, {label}: mean test {statistics.mean(tests):.1%} over {len(tests)} seed(s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
