"""Watch the classes merge: per-layer 2-D views of a trained GCN's node representations.

For a trained model, every hidden layer's output ``H^(l)`` (``N x hidden``) is projected
to 2-D with **one** principal-component projection, fitted once per model and reused
for every layer, so that motion between layers is change of the representation, not a
change of the view. The projection is only a picture: how far the classes have merged is
measured in the full hidden representation, by the class separation
(:func:`class_separation`, the between-class share of the variance: 1 = every class a
point of its own, 0 = the class means coincide) and the relative distance to the
over-smoothing subspace (:func:`dropedge_core.method.metrics.subspace_distance`); the
silhouette of the class labels (:func:`silhouette`) is kept beside them. The sentences
that state a trend are built from those numbers (:mod:`dropedge_core.studies.merging`).

:func:`class_snapshots` trains one model per sampler and returns a :class:`Snapshots`;
:func:`save_snapshots` / :func:`load_snapshots` write and read them as a compressed
``.npz`` of plain arrays (no pickles; read with ``allow_pickle=False``). The app ships
some (:data:`BUNDLED_VIEWS`, GCNs on Cora, made by ``bench/make_snapshots.py``) so the
view opens without training.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import torch

from dropedge_core import paths
from dropedge_core._lazy import lazy_import
from dropedge_core.method import metrics, normalization
from dropedge_core.method.graph import Graph
from dropedge_core.studies._snapshot_files import BUNDLED_SNAPSHOT, Snapshot, SnapshotError, Snapshots
from dropedge_core.studies._snapshot_files import load_snapshots as load_snapshots  # re-exported
from dropedge_core.studies._snapshot_files import save_snapshots as save_snapshots  # re-exported
from dropedge_core.studies.sampling import run_seed
from dropedge_core.training import AdjacencyBuilder, TrainConfig, prepare_features, recipes, train

__all__ = [
    "SNAPSHOT_DIR", "BUNDLED_FAILING",
    "BUNDLED_VIEWS",
    "VIEW_SAMPLERS", "DEEP_RECIPE", "RECIPES", "FIT_CHOICES",
    "class_separation", "silhouette", "class_snapshots",
    "propagated_features", "propagation_snapshots", "receptive_field", "separation_table",
]

#: Where the bundled snapshots live.
SNAPSHOT_DIR = paths.SNAPSHOT_DIR
#: The bundled 16-layer Cora GCN (NoDrop / DropEdge / DropEdge++), trained with
#: :data:`DEEP_RECIPE` (``BUNDLED_SNAPSHOT``, from :mod:`~dropedge_core.studies._snapshot_files`).
#: The same model trained with :data:`FAILING_RECIPE` (it does not learn: the layers collapse).
BUNDLED_FAILING = SNAPSHOT_DIR / "cora_semi_gcn16_old_defaults.npz"
#: An 8-layer Cora GCN under the shallow settings (:data:`FAILING_RECIPE`), seed 1: NoDrop
#: merges the classes, DropEdge++ keeps them apart (the view opens on it).
BUNDLED_MERGING = SNAPSHOT_DIR / "cora_semi_gcn8_shallow_seed1.npz"
#: The same at seed 0, where it goes the other way (NoDrop trains, the dropping samplers do not).
BUNDLED_MERGING_SEED0 = SNAPSHOT_DIR / "cora_semi_gcn8_shallow_seed0.npz"
#: A 32-layer Cora GCN with :data:`DEEP_RECIPE` (200 epochs): the deepest bundled model.
BUNDLED_DEEP32 = SNAPSHOT_DIR / "cora_semi_gcn32.npz"
#: The bundled views by the page's source key: ``(file, what it is, in words)``; the page
#: opens on the first.
BUNDLED_VIEWS: dict[str, tuple[Path, str]] = {
    "bundled": (BUNDLED_SNAPSHOT, "Cora GCN-16, a recipe that trains"),
    "deep32": (BUNDLED_DEEP32, "Cora GCN-32, the same recipe"),
    "merging": (BUNDLED_MERGING, "Cora GCN-8, shallow settings, seed 1"),
    "merging-seed0": (BUNDLED_MERGING_SEED0, "the same, seed 0"),
    "old-defaults": (BUNDLED_FAILING, "Cora GCN-16, the old defaults (does not learn)"),
}
#: The samplers the view compares.
VIEW_SAMPLERS: tuple[str, ...] = ("nodrop", "dropedge", "dropedge++")
_TRAINING_KEYS = ("lr", "dropout", "weight_decay", "self_loop", "hidden", "normalization")
#: A deep GCN that trains: the depth recipe's settings at 16 layers
#: (:mod:`dropedge_core.training.recipes`; at 16 layers on Cora semi they reach 70-78 %).
DEEP_RECIPE: dict = {k: recipes.depth_recipe(16)[k] for k in _TRAINING_KEYS}
#: The old defaults, the quick recipe (lr 0.01, dropout 0.5 before every layer, weight
#: decay 5e-4, no self-feature term): at 16 layers on Cora every sampler sits near chance.
FAILING_RECIPE: dict = {k: recipes.SHALLOW[k] for k in _TRAINING_KEYS}
RECIPES: dict[str, dict] = {"deep": DEEP_RECIPE, "old-defaults": FAILING_RECIPE}
SILHOUETTE_NODES = 1000
FIT_CHOICES: tuple[str, ...] = ("all", "first")


def class_separation(h: torch.Tensor, labels: torch.Tensor) -> float:
    """The between-class share of the variance of ``h`` ``(N, F)``: ``tr(S_B) / tr(S_T)``.

    ``S_T`` is the scatter of the labelled rows (``labels >= 0``) around their mean,
    ``S_B`` that of the class means (each weighted by its class size), so that
    ``tr(S_T) = tr(S_B) + tr(S_W)`` and the share is in ``[0, 1]``: 1 when every node sits
    on its class mean (classes apart, each a point), 0 when the class means coincide
    (merged), whatever the spread. Measured in the full representation, every hidden unit
    (a 2-D projection can hide a separation, or invent one); scale-free, so layers whose
    norms differ by orders of magnitude compare. The between/within ratio is
    ``share / (1 - share)``. Returns 0 for fewer than two classes or no variance.

    Args:
        h (torch.Tensor): ``(N, F)`` node representations.
        labels (torch.Tensor): ``(N,)`` classes, ``-1`` for an unlabelled node.

    Example:
        >>> h = torch.tensor([[0.0], [0.2], [4.0], [4.2]])
        >>> round(class_separation(h, torch.tensor([0, 0, 1, 1])), 4)
        0.9975
    """
    h = h.detach().double()
    keep = labels.to(h.device) >= 0
    h, y = h[keep], labels.to(h.device)[keep].long()
    if h.size(0) < 2 or torch.unique(y).numel() < 2:
        return 0.0
    y = torch.unique(y, return_inverse=True)[1]
    centred = h - h.mean(0)
    total = float(centred.pow(2).sum())
    if total <= 0:
        return 0.0
    onehot = torch.nn.functional.one_hot(y).double()
    counts = onehot.sum(0)
    means = (onehot.T @ centred) / counts[:, None]  # class means, relative to the grand mean
    between = float((counts[:, None] * means.pow(2)).sum())
    return min(max(between / total, 0.0), 1.0)


def silhouette(h: torch.Tensor, labels: torch.Tensor, max_nodes: int = SILHOUETTE_NODES,
               generator: torch.Generator | None = None) -> float:
    """Mean silhouette of the classes ``labels`` in the representation ``h`` ``(N, F)``.

    Per node ``i``: ``a`` = mean Euclidean distance to the other nodes of its class,
    ``b`` = the smallest mean distance to another class, ``s_i = (b - a) / max(a, b)``
    (0 for a node alone in its class, or when ``a = b = 0``). Returns the mean over nodes
    with a label (``labels >= 0``), in ``[-1, 1]``: near 1 the classes are tight and
    apart, near 0 they overlap — what over-smoothing does to them. Above ``max_nodes``
    labelled nodes a random subset of that size is used (the distances are ``S x S``).

    Args:
        h (torch.Tensor): ``(N, F)`` node representations.
        labels (torch.Tensor): ``(N,)`` classes, ``-1`` for an unlabelled node.
        max_nodes (int, optional): the most labelled nodes measured (a random subset above).
            (default: :obj:`SILHOUETTE_NODES`, 1000)
        generator (torch.Generator, optional): draws the subset (a fresh seed-0 generator
            when ``None``). (default: :obj:`None`)

    Example:
        >>> h = torch.tensor([[0.0], [0.1], [5.0], [5.1]])
        >>> round(silhouette(h, torch.tensor([0, 0, 1, 1])), 2)
        0.98
    """
    h = h.detach().float()
    keep = labels >= 0
    h, y = h[keep], labels[keep].long()
    if h.size(0) > max_nodes:
        idx = torch.randperm(h.size(0), generator=generator)[:max_nodes]
        h, y = h[idx], y[idx]
    n = h.size(0)
    if n < 2:
        return 0.0
    y = torch.unique(y, return_inverse=True)[1]
    num_classes = int(y.max()) + 1
    if num_classes < 2:
        return 0.0
    dist = torch.cdist(h, h)
    onehot = torch.nn.functional.one_hot(y, num_classes).float()
    sums = dist @ onehot  # (n, C): total distance from each node to each class
    counts = onehot.sum(0)
    own = counts[y]
    a = sums.gather(1, y[:, None]).squeeze(1) / (own - 1).clamp_min(1)
    mean_other = sums / counts.clamp_min(1)
    mean_other.scatter_(1, y[:, None], float("inf"))
    b = mean_other.min(1).values
    denom = torch.maximum(a, b)
    s = torch.where(denom > 0, (b - a) / denom.clamp_min(1e-12), torch.zeros_like(a))
    s = torch.where(own > 1, s, torch.zeros_like(s))
    return float(s.mean())


def layer_projections(hidden: Sequence[torch.Tensor], fit: str = "all") -> tuple[torch.Tensor, float]:
    """One 2-D principal-component projection of every layer's representation.

    Args:
        hidden: ``[H^(1), ..., H^(K)]``, each ``(N, F)`` of the same width ``F``.
        fit: ``"all"`` fits the projection on all layers stacked, ``"first"`` on
            ``H^(1)`` only; either way the same centre and axes are reused for every
            layer, so a point moves only when its representation changes.

    Each layer is first scaled to unit root-mean-square row norm: a GCN's layers differ
    in overall scale by orders of magnitude, and the scale says nothing about whether
    the classes merged. The axes come from the exact eigendecomposition of the ``F x F``
    covariance (deterministic, unlike a randomised low-rank PCA), each axis's sign fixed
    so that its largest loading is positive.

    Returns:
        ``(K, N, 2)`` coordinates and the share of the fitted variance the two axes hold.
    """
    if fit not in FIT_CHOICES:
        raise SnapshotError(f"fit must be one of {', '.join(FIT_CHOICES)} (got {fit!r})")
    if not hidden:
        raise SnapshotError("no hidden layers to project (a model needs at least 2 layers)")
    stacked = torch.stack([h.detach().float() for h in hidden])  # (K, N, F)
    rms = stacked.pow(2).sum(2).mean(1).sqrt().clamp_min(1e-12)
    stacked = stacked / rms[:, None, None]
    basis = stacked.flatten(0, 1) if fit == "all" else stacked[0]
    mean = basis.mean(0)
    centred = basis - mean
    cov = centred.T @ centred / max(basis.size(0) - 1, 1)
    evals, evecs = torch.linalg.eigh(cov.double())
    axes = evecs[:, -2:].flip(1).float()  # the two largest
    if axes.size(1) < 2:  # one feature: a zero second axis
        axes = torch.cat([axes, torch.zeros_like(axes)], 1)
    signs = torch.sign(axes.gather(0, axes.abs().argmax(0, keepdim=True))).clamp_min(0) * 2 - 1
    axes = axes * signs
    total = float(evals.clamp_min(0).sum())
    share = float(evals[-2:].clamp_min(0).sum()) / total if total > 0 else 0.0
    return (stacked - mean) @ axes, share


def model_view(graph: Graph, config: TrainConfig, fit: str = "all",
               on_event: Callable[[dict], None] | None = None) -> Snapshot:
    """Train ``config`` on ``graph`` and return its per-layer view (:class:`Snapshot`).

    The view is of the evaluation forward pass (full graph, eval mode) with the weights
    after the last epoch run; the silhouette uses a fixed subset of
    :data:`SILHOUETTE_NODES` nodes (seed 0) for every layer.
    """
    if config.backbone != "gcn" or config.num_layers < 2:
        raise SnapshotError("the class view needs a GCN with at least 2 layers "
                            f"(got {config.backbone}, {config.num_layers} layers)")
    result = train(config, graph=graph, on_event=on_event)
    model = result.model
    if model is None or not result.history:
        raise SnapshotError(f"training produced no model ({result.message})")
    device = next(model.parameters()).device
    g = graph if graph.x.device == device else graph.to(device)
    adjs = [AdjacencyBuilder(g, config.normalization).full()] * config.num_layers
    model.eval()
    with torch.no_grad():
        _, hidden = model(prepare_features(g.x), adjs, return_hidden=True)
    hidden = [h.cpu() for h in hidden]
    proj, share = layer_projections(hidden, fit)
    y = graph.y.cpu()
    sil = [silhouette(h, y, generator=torch.Generator().manual_seed(0)) for h in hidden]
    sub = [metrics.subspace_distance(h, graph) for h in hidden]
    sep = [class_separation(h, y) for h in hidden]
    return Snapshot(config.sampler, proj.numpy().astype(np.float32), sil, sub, sep, result.test_acc,
                    result.history[-1]["test_acc"], result.epochs_run, share)


def class_snapshots(graph: Graph, base: TrainConfig, sampler_names: Sequence[str] = VIEW_SAMPLERS,
                    fit: str = "all", progress: Callable[[str], None] | None = None) -> Snapshots:
    """Train ``base`` once per sampler (``base.replace(sampler=...)``) on ``graph`` and
    return the views side by side, with ``base``'s settings recorded.

    Args:
        graph (Graph): the loaded graph.
        base (TrainConfig): the settings trained (``base.sampler`` is replaced).
        sampler_names (Sequence[str], optional): the samplers trained.
            (default: :obj:`("nodrop", "dropedge", "dropedge++")`)
        fit (str, optional): ``"all"`` fits the 2-D projection on all layers stacked,
            ``"first"`` on the first hidden layer only (one of :data:`FIT_CHOICES`).
            (default: :obj:`"all"`)
        progress (Callable[[str], None], optional): called with the sampler's name before
            each training. (default: :obj:`None`)
    """
    items = []
    for name in sampler_names:  # a loop over models, each a full training run
        if progress is not None:
            progress(name)
        items.append(model_view(graph, base.replace(sampler=name), fit))
    settings = {**base.to_dict(), "samplers": list(sampler_names), "fit": fit,
                "graph": graph.name, "num_nodes": graph.num_nodes, "num_edges": graph.num_edges}
    settings.pop("sampler", None)
    return Snapshots(graph.y.cpu().numpy().astype(np.int64), settings, items)


def propagated_features(graph: Graph, max_features: int = 64, seed: int = 0) -> torch.Tensor:
    """The features the propagation views start from: ``X``, or, wider than
    ``max_features``, ``X R`` with a seeded Gaussian ``R / sqrt(max_features)`` (propagation
    is linear, so this equals projecting every propagated ``Â···Â X``; norms are kept in
    expectation).

    Args:
        graph (Graph): the graph (its features ``X``, ``(N, C)``).
        max_features (int, optional): the widest features kept as they are.
            (default: :obj:`64`)
        seed (int, optional): the seed of the projection ``R``. (default: :obj:`0`)
    """
    x = graph.x.float().cpu()
    if x.size(1) > max_features:
        gen = torch.Generator().manual_seed(run_seed(seed, "projection"))
        x = x @ (torch.randn(x.size(1), max_features, generator=gen) / max_features ** 0.5)
    return x


def propagation_snapshots(graph: Graph, masks_by: dict[str, torch.Tensor], fit: str = "all",
                          seed: int = 0) -> Snapshots:
    """What propagation alone does (no weights, no training): ``H_0 = X``,
    ``H_{l+1} = Â^(l) H_l`` with each sampler's AN-normalised kept adjacency, every step
    ``H_0 .. H_L`` projected with one PCA per sampler (:func:`layer_projections`), with the
    silhouette and the subspace distance per step — the same :class:`Snapshots` the
    class view draws (its "layers" are the steps, the first one ``X`` itself).

    Args:
        graph (Graph): the graph.
        masks_by (dict[str, torch.Tensor]): ``{sampler: (L, M) masks}``; ``L`` steps each.
        fit (str, optional): ``"all"`` or ``"first"`` (as in :func:`class_snapshots`).
            (default: :obj:`"all"`)
        seed (int, optional): the seed of the feature projection
            (:func:`propagated_features`). (default: :obj:`0`)
    """
    g = graph if graph.x.device.type == "cpu" else graph.to("cpu")
    x = propagated_features(g, seed=seed)
    labels = g.y.cpu() if g.num_classes else torch.full((g.num_nodes,), -1)
    items = []
    for name, masks in masks_by.items():
        hs = [x]
        for ei, ew in normalization.adjacencies(g, masks.cpu(), "AN"):  # a loop over layers
            hs.append(normalization.propagate(normalization.to_sparse(ei, ew, g.num_nodes), hs[-1]))
        proj, share = layer_projections(hs, fit)
        sil = [silhouette(h, labels, generator=torch.Generator().manual_seed(0)) for h in hs]
        sub = [metrics.subspace_distance(h, g) for h in hs]
        sep = [class_separation(h, labels) for h in hs]
        items.append(Snapshot(name, proj.numpy(), sil, sub, sep, None, None, 0, share))
    layers = max((m.size(0) for m in masks_by.values()), default=0)
    settings = {"graph": g.name, "num_nodes": g.num_nodes, "num_edges": g.num_edges,
                "num_layers": layers, "propagation": "AN, no weights", "fit": fit, "seed": seed}
    return Snapshots(labels.numpy().astype(np.int64), settings, items)


def receptive_field(graph: Graph, masks: torch.Tensor, node: int) -> torch.Tensor:
    """The nodes ``node`` reaches through each layer's kept edges, growing layer by layer.

    Row ``l`` of the returned ``(L, N)`` bool is the non-zero pattern of row ``node`` of
    ``Π_{i=0..l} (A^(i) + I)`` — the nodes that ``node``'s input features reach after
    layers ``0 .. l`` (each step: stay, or cross one edge kept at that layer). Summed over
    all nodes, row ``l`` counts the edge number of layer ``l`` that MEN averages
    (:func:`dropedge_core.method.metrics.edge_numbers`). ``masks`` ``(L, M)`` undirected or
    ``(L, 2M)`` directed (columns of ``graph.edge_index``).

    Args:
        graph (Graph): the graph the masks index.
        masks (torch.Tensor): ``(L, M)`` undirected or ``(L, 2M)`` directed bool masks.
        node (int): the node whose features spread.

    Example:
        >>> from dropedge_core.data.synthetic import karate
        >>> g = karate()
        >>> keep_all = torch.ones(2, g.num_edges, dtype=torch.bool)
        >>> receptive_field(g, keep_all, 0).sum(dim=1).tolist()  # node 0: itself + 16 neighbours, then 2 hops
        [17, 26]
    """
    n = graph.num_nodes
    if not 0 <= int(node) < n:
        raise ValueError(f"node must be in [0, {n - 1}] (got {node})")
    masks = masks.cpu()
    edges = (graph.undirected_edges if masks.size(1) == graph.num_edges else graph.edge_index).cpu()
    reach = torch.zeros(n, dtype=torch.bool)
    reach[int(node)] = True
    rows = []
    for kept in masks:  # a loop over layers; each step is one vectorised scatter
        u, v = edges[:, kept]
        nxt = reach.clone()
        nxt[v[reach[u]]] = True
        nxt[u[reach[v]]] = True
        reach = nxt
        rows.append(reach)
    return torch.stack(rows) if rows else torch.zeros(0, n, dtype=torch.bool)


def separation_table(snaps: Snapshots, first: int = 1):
    """One row per ``(sampler, layer)``: ``sampler, layer, separation, subspace_distance,
    silhouette`` (layer ``l`` = the output of hidden layer ``l``, counted from ``first``:
    1 for a model's hidden layers, 0 for propagation steps, where step 0 is ``X``).

    Args:
        snaps (Snapshots): the view's per-layer numbers (:func:`class_snapshots` or
            :func:`propagation_snapshots`).
        first (int, optional): the number of the first layer: 1 for a model's hidden layers,
            0 for propagation steps. (default: :obj:`1`)
    """
    pd = lazy_import("pandas")
    columns = ["sampler", "layer", "separation", "subspace_distance", "silhouette"]
    rows = [{"sampler": s.sampler, "layer": k + first, "separation": s.separation[k],
             "subspace_distance": s.subspace[k], "silhouette": s.silhouette[k]}
            for s in snaps.items for k in range(len(s.silhouette))]
    return pd.DataFrame(rows, columns=columns)
