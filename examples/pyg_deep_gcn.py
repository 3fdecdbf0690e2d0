"""A 16-layer stack of PyG's own ``GCNConv`` trained with DropEdge++, beside the project's trainer.

Cora (semi-supervised split) under the project's depth recipe
(``dropedge_explorer.training.recipes``: at 16 layers lr 1e-3, no dropout, no weight decay,
the self-feature term "Loop" on, hidden 128, AN normalisation, 300 epochs with patience
150, keep rates 0.3 -> 0.8). The PyG model mirrors the project's GCN:

* every layer is ``GCNConv(cached=False)`` (its ``gcn_norm`` is the AN normalisation,
  computed on the layer's own kept edges; ``cached=True`` would freeze the first sample)
  plus a bias-free ``Linear`` for the Loop term ``H W_self``, ReLU between layers,
  log-softmax at the end;
* :class:`dropedge_core.pyg.LayerDropEdge` draws every layer's edges from a generator
  seeded like the trainer's, so both see the same masks in every epoch (checked below
  against the ``Graph`` path);
* the weights are drawn as the project's ``GraphConv`` draws them (Glorot, weight then
  Loop weight, per layer, after ``torch.manual_seed(seed)``) and copied into the PyG
  layers (PyG stores them transposed), so each seed starts both from the same point;
* training is the trainer's loop: Adam, one full-batch step per epoch, evaluation on
  the full graph in eval mode, test accuracy at the best validation accuracy (ties: the
  lower validation loss), early stopping after ``patience`` epochs without a better
  validation accuracy or loss.

Differences that remain: PyG aggregates by gather/scatter where the project multiplies
CSR matrices, so sums are taken in another order (float noise that grows over 300
epochs); PyG's ``GCNConv`` recomputes ``gcn_norm`` in every layer; the project keeps
the bag-of-words features as a sparse matrix, and so does this script for GCNConv/GATConv
(``SAGEConv`` aggregates raw features and gets them dense).

Measured (2026-11-26, the project's shared 2-core CPU, one thread, 5 seeds, full recipe,
commit a0eac7b): PyG 75.7 / 78.3 / 75.2 / 76.8 / 73.7, mean **75.94%** (std 1.54); the
project's trainer 74.6 / 77.6 / 75.7 / 76.4 / 74.6, mean **75.78%** (std 1.14):
+0.16 points; the masks matched the ``Graph`` path's for every seed (seed 0 re-run on the
final code: the same 75.7%, best epoch 214). Same start and same
masks, the two runs part after a few epochs (float noise, amplified by Adam over 16
layers), so a seed can differ by a point either way; the means agree.

``--conv sage`` (``SAGEConv``, whose root weight is the Loop term) or ``--conv gat``
(``GATConv`` + Loop) train through the same ``LayerDropEdge``; the project has no such
layers, so its GCN is printed beside them as the reference.

    DROPEDGE_DATA=../shared/data python examples/pyg_deep_gcn.py [--seeds 0 1 2 3 4] [--epochs 300]
        [--conv gcn|sage|gat] [--layers 16] [--sampler dropedge++] [--adjacency] [--no-project]

``--adjacency``: ``LayerDropEdge(normalization="AN")`` hands ``GCNConv(normalize=False)``
every layer's normalised sparse adjacency (the trainer's own, built for all layers in
one pass), so PyG multiplies sparse matrices as the trainer does; the default is the
plain PyG way, kept ``edge_index`` tensors and ``gcn_norm`` in every layer.
"""
from __future__ import annotations

import argparse
import math
import statistics
import sys
import time

import torch
import torch.nn.functional as F
from dropedge_core import datasets, samplers
from dropedge_core.models import feature_dropout
from dropedge_core.pyg import LayerDropEdge, to_pyg
from torch import nn

from dropedge_explorer.training import TrainConfig, train
from dropedge_explorer.training.trainer import prepare_features


class DeepPyG(nn.Module):
    """``L`` PyG layers over the per-layer edges of one :class:`LayerDropEdge`."""

    def __init__(self, conv: str, in_dim: int, num_classes: int, config: TrainConfig,
                 drop: LayerDropEdge):
        from torch_geometric.nn import GATConv, GCNConv, Linear, SAGEConv

        super().__init__()
        dims = [in_dim] + [config.hidden] * (config.num_layers - 1) + [num_classes]
        # with normalised adjacencies from LayerDropEdge (--adjacency), GCNConv only multiplies
        normalize = drop.normalization is None
        make = {"gcn": lambda a, b: GCNConv(a, b, cached=False, normalize=normalize),
                "sage": lambda a, b: SAGEConv(a, b),  # root weight = the Loop term
                "gat": lambda a, b: GATConv(a, b, heads=1)}[conv]
        self.convs = nn.ModuleList(make(a, b) for a, b in zip(dims[:-1], dims[1:]))
        loop = config.self_loop and conv != "sage"
        self.loops = nn.ModuleList(Linear(a, b, bias=False, weight_initializer="glorot")
                                   for a, b in zip(dims[:-1], dims[1:])) if loop else None
        self.dropout, self.drop = config.dropout, drop

    def forward(self, x: torch.Tensor, edge_index: torch.Tensor, x_kernel: torch.Tensor) -> torch.Tensor:
        h, last = x, len(self.convs) - 1
        for i, (conv, layer_edges) in enumerate(zip(self.convs, self.drop(edge_index, x=x_kernel))):
            h_in = feature_dropout(h, self.dropout, self.training)  # the project's (sparse-aware)
            z = conv(h_in, layer_edges)
            if self.loops is not None:
                z = z + self.loops[i](h_in)
            h = F.relu(z) if i < last else z
        return F.log_softmax(h, dim=1)

    @torch.no_grad()
    def init_like_project(self, seed: int) -> None:
        """The project's ``GraphConv`` initialisation for ``seed``: per layer a Glorot
        ``(in, out)`` weight, then a Glorot Loop weight, zero biases (GCNConv only)."""
        torch.manual_seed(seed)
        for i, conv in enumerate(self.convs):
            weight = nn.init.xavier_uniform_(torch.empty(conv.in_channels, conv.out_channels))
            weight_self = nn.init.xavier_uniform_(torch.empty(conv.in_channels, conv.out_channels))
            conv.lin.weight.copy_(weight.t())
            self.loops[i].weight.copy_(weight_self.t())
            conv.bias.zero_()


def accuracy(log_probs: torch.Tensor, y: torch.Tensor, mask: torch.Tensor) -> float:
    return float((log_probs[mask].argmax(1) == y[mask]).float().mean())


def fit_pyg(conv: str, data, config: TrainConfig, x_conv: torch.Tensor, adjacency: bool = False,
            on_epoch=None) -> dict:
    """Train the PyG model with the trainer's loop and model selection; return its outcome.
    ``adjacency``: LayerDropEdge hands GCNConv(normalize=False) the normalised sparse
    adjacencies; ``on_epoch(epoch)`` is called after every epoch (the benchmark's clock)."""
    # the trainer's config holds the paper's keep rates: hand LayerDropEdge the core sampler
    # itself (in the PyG front end, p would be PyG's drop probability)
    sampler = samplers.make(config.sampler, p_min=config.p_min, p_max=config.p_max, p=config.p,
                            kernel=config.kernel, directed=config.directed)
    drop = LayerDropEdge(config.num_layers, sampler,
                         generator=torch.Generator().manual_seed(config.seed),  # as the trainer's
                         normalization=config.normalization if adjacency else None)
    torch.manual_seed(config.seed)  # SAGEConv/GATConv: PyG's own initialisation, from the seed
    model = DeepPyG(conv, data.num_features, int(data.y.max()) + 1, config, drop)
    if conv == "gcn" and model.loops is not None:
        model.init_like_project(config.seed)
    optimizer = torch.optim.Adam(model.parameters(), lr=config.lr, weight_decay=config.weight_decay)
    y, ei = data.y, data.edge_index
    best = {"epoch": None, "val_acc": -1.0, "val_loss": math.inf, "test_acc": None}
    best_loss_seen, since_improved, t0, epoch = math.inf, 0, time.perf_counter(), 0
    for epoch in range(1, config.epochs + 1):
        model.train()
        optimizer.zero_grad(set_to_none=True)
        loss = F.nll_loss(model(x_conv, ei, data.x)[data.train_mask], y[data.train_mask])
        loss.backward()
        optimizer.step()
        model.eval()
        with torch.no_grad():
            out = model(x_conv, ei, data.x)
            val_loss = float(F.nll_loss(out[data.val_mask], y[data.val_mask]))
        val_acc, test_acc = accuracy(out, y, data.val_mask), accuracy(out, y, data.test_mask)
        if val_acc > best["val_acc"] or (val_acc == best["val_acc"] and val_loss < best["val_loss"]):
            best.update(epoch=epoch, val_acc=val_acc, val_loss=val_loss, test_acc=test_acc)
            since_improved = 0
        elif val_loss < best_loss_seen:
            since_improved = 0
        else:
            since_improved += 1
        best_loss_seen = min(best_loss_seen, val_loss)
        if on_epoch is not None:
            on_epoch(epoch)
        if config.patience > 0 and since_improved >= config.patience and epoch < config.epochs:
            break
    return {**best, "epochs_run": epoch, "seconds": time.perf_counter() - t0}


def masks_match_graph_path(graph, data, config: TrainConfig, draws: int = 3) -> bool:
    """The first ``draws`` samples of the PyG module equal the ``Graph`` path's for the seed."""
    sampler = samplers.make(config.sampler, p_min=config.p_min, p_max=config.p_max, p=config.p,
                            kernel=config.kernel, directed=config.directed)
    drop = LayerDropEdge(config.num_layers, sampler, generator=torch.Generator().manual_seed(config.seed))
    gen = torch.Generator().manual_seed(config.seed)
    return all(torch.equal(drop.masks(data.edge_index, x=data.x),
                           graph.directed_mask(sampler.sample(graph, config.num_layers, gen)))
               for _ in range(draws))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    ap.add_argument("--epochs", type=int, default=None, help="default: the depth recipe's (300 at 16 layers)")
    ap.add_argument("--layers", type=int, default=16)
    ap.add_argument("--conv", choices=("gcn", "sage", "gat"), default="gcn")
    ap.add_argument("--sampler", choices=samplers.NAMES, default="dropedge++")
    ap.add_argument("--dataset", default="cora")
    ap.add_argument("--split", default="semi")
    ap.add_argument("--adjacency", action="store_true",
                    help="GCNConv(normalize=False) on LayerDropEdge's normalised sparse adjacencies")
    ap.add_argument("--no-project", action="store_true", help="train only the PyG model")
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args(argv)
    torch.set_num_threads(args.threads)
    try:
        graph = datasets.load(args.dataset, split=args.split)
    except datasets.DatasetError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    data = to_pyg(graph)
    # the trainer's feature layout: bag-of-words as a sparse matrix (SAGEConv aggregates raw features)
    x_conv = data.x if args.conv == "sage" else prepare_features(data.x)
    base = TrainConfig(dataset=args.dataset, split=args.split, backbone="gcn", num_layers=args.layers,
                       sampler=args.sampler, epochs=args.epochs, diag_every=0, device="cpu")
    if args.adjacency and args.conv != "gcn":
        print("error: --adjacency needs --conv gcn (SAGEConv/GATConv take edge_index)", file=sys.stderr)
        return 2
    if base.normalization != "AN" or base.batch_norm:
        print(f"error: the recipe gives {base.normalization} / batch norm {base.batch_norm}; this example "
              "mirrors AN without batch norm (GCNConv's gcn_norm)", file=sys.stderr)
        return 2
    print(f"{args.dataset} ({args.split}), {args.layers} layers of PyG {args.conv.upper()}Conv + "
          f"LayerDropEdge({args.sampler!r}), recipe 'depth': lr {base.lr}, dropout {base.dropout}, "
          f"weight decay "
          f"{base.weight_decay}, Loop {base.self_loop}, hidden {base.hidden}, {base.epochs} epochs, "
          f"patience {base.patience}, keep {base.p_min} -> {base.p_max}")
    rows = []
    for seed in args.seeds:
        config = base.replace(seed=seed)
        same = masks_match_graph_path(graph, data, config)
        pyg = fit_pyg(args.conv, data, config, x_conv, adjacency=args.adjacency)
        ours = None if args.no_project else train(config, graph=graph)
        rows.append((pyg["test_acc"], None if ours is None else ours.test_acc))
        line = (f"seed {seed}: PyG {args.conv} {100 * pyg['test_acc']:.1f}% (best epoch {pyg['epoch']}, "
                f"{pyg['seconds']:.0f} s)")
        if ours is not None:
            line += (f" | project trainer GCN {100 * ours.test_acc:.1f}% (best epoch {ours.best_epoch}, "
                     f"{ours.total_time:.0f} s)")
        print(line + f" | masks identical to the Graph path's: {same}", flush=True)
    pyg_accs = [100 * a for a, _ in rows]
    print(f"PyG {args.conv}: mean {statistics.mean(pyg_accs):.2f}% "
          f"(std {statistics.pstdev(pyg_accs):.2f}) over {len(rows)} seeds")
    if not args.no_project:
        ours_accs = [100 * b for _, b in rows]
        print(f"project trainer GCN: mean {statistics.mean(ours_accs):.2f}% "
              f"(std {statistics.pstdev(ours_accs):.2f}); difference "
              f"{statistics.mean(pyg_accs) - statistics.mean(ours_accs):+.2f} points")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
