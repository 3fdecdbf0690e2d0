"""Watch the classes merge: per-layer 2-D views of a trained GCN's node representations.

For a trained model, every hidden layer's output ``H^(l)`` (``N x hidden``) is measured in
full — the class separation (:func:`class_separation`, the between-class share of the
variance: 1 = every class a point of its own, 0 = the class means coincide), the relative
distance to the over-smoothing subspace
(:func:`dropedge_core.metrics.subspace_distance`) and the silhouette
(:func:`silhouette`) — and drawn in 2-D by :func:`class_picture`: on the layer's two
between-class axes, with the spread around each class mean scaled so that the picture's
between-class share *is* the measured separation (a picture cannot look more or less
separated than its number). The sentences that state a trend are built from those numbers
(:mod:`dropedge_explorer.studies.merging`).

:func:`class_snapshots` trains one model per sampler and returns a :class:`Snapshots`, with
each run's stream fingerprint in its settings; :func:`save_snapshots` /
:func:`load_snapshots` write and read them as a compressed ``.npz`` of plain arrays (no
pickles; read with ``allow_pickle=False``). The app ships some (:data:`BUNDLED_VIEWS`, GCNs
on Cora, made by ``bench/make_snapshots.py`` at today's sampler streams:
:func:`snapshot_stream`) so the view opens without training.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import torch
from dropedge_core import metrics, normalization
from dropedge_core.graph import Graph
from dropedge_core.normalization import AdjacencyBuilder

from dropedge_explorer import paths
from dropedge_explorer._lazy import lazy_import
from dropedge_explorer.studies._snapshot_files import BUNDLED_SNAPSHOT, Snapshot, SnapshotError, Snapshots
from dropedge_explorer.studies._snapshot_files import load_snapshots as load_snapshots  # re-exported
from dropedge_explorer.studies._snapshot_files import save_snapshots as save_snapshots  # re-exported
from dropedge_explorer.studies.sampling import run_seed
from dropedge_explorer.training import TrainConfig, prepare_features, recipes, train
from dropedge_explorer.training._fingerprint import FINGERPRINT_EPOCHS, fingerprint

__all__ = [
    "SNAPSHOT_DIR", "BUNDLED_FAILING",
    "BUNDLED_VIEWS",
    "VIEW_SAMPLERS", "DEEP_RECIPE", "RECIPES", "PICTURE",
    "class_separation", "silhouette", "class_picture", "class_snapshots", "snapshot_stream",
    "propagated_features", "propagation_snapshots", "receptive_field", "separation_table",
]

#: Where the bundled snapshots live.
SNAPSHOT_DIR = paths.SNAPSHOT_DIR
#: The bundled 16-layer Cora GCN (NoDrop / DropEdge / DropEdge++), trained with
#: :data:`DEEP_RECIPE` (``BUNDLED_SNAPSHOT``, from :mod:`~dropedge_explorer.studies._snapshot_files`).
#: The same model trained with :data:`FAILING_RECIPE` (it does not learn).
BUNDLED_FAILING = SNAPSHOT_DIR / "cora_semi_gcn16_old_defaults.npz"
#: The bundled views by the page's source key: ``(file, what it is, in words)``; the page
#: opens on the first. Only snapshots of today's sampler streams are bundled (each file
#: records its runs' fingerprints; a test recomputes them, :func:`snapshot_stream`).
BUNDLED_VIEWS: dict[str, tuple[Path, str]] = {
    "bundled": (BUNDLED_SNAPSHOT, "Cora GCN-16, the depth recipe"),
    "old-defaults": (BUNDLED_FAILING, "Cora GCN-16, the old defaults"),
}
#: The samplers the view compares.
VIEW_SAMPLERS: tuple[str, ...] = ("nodrop", "dropedge", "dropedge++")
_TRAINING_KEYS = ("lr", "dropout", "weight_decay", "self_loop", "hidden", "normalization")
#: A deep GCN that trains: the depth recipe's settings at 16 layers
#: (:mod:`dropedge_explorer.training.recipes`; at 16 layers on Cora semi they reach 70-78 %).
DEEP_RECIPE: dict = {k: recipes.depth_recipe(16)[k] for k in _TRAINING_KEYS}
#: The old defaults, the quick recipe (lr 0.01, dropout 0.5 before every layer, weight
#: decay 5e-4, no self-feature term): at 16 layers on Cora every sampler sits near chance.
FAILING_RECIPE: dict = {k: recipes.SHALLOW[k] for k in _TRAINING_KEYS}
RECIPES: dict[str, dict] = {"deep": DEEP_RECIPE, "old-defaults": FAILING_RECIPE}
SILHOUETTE_NODES = 1000
#: How the 2-D pictures are drawn (:func:`class_picture`), recorded in a snapshot's settings.
PICTURE = "between-class axes, offsets scaled to the measured separation"


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


def class_picture(h: torch.Tensor, labels: torch.Tensor) -> tuple[np.ndarray, np.ndarray, float]:
    """A 2-D picture of ``h`` ``(N, F)`` whose between-class share is the measured one.

    The axes are the layer's two between-class directions: the top two right singular
    vectors of the class means (each weighted by the square root of its class size, so
    the axes are the top eigenvectors of the between-class scatter ``S_B``). Each node is
    drawn at its class mean's position on those axes plus its own offset from that mean
    on the same axes, the offsets scaled by one factor per layer so that the picture's
    between-class share of the variance equals :func:`class_separation` of the full
    representation: a separation of 0.55 looks separated and one of 0.03 merged, whatever
    the width ``F``. (Any 2-D projection chosen to show the classes apart shows them
    further apart than they are in ``F`` dimensions; the scaling undoes exactly that.)
    When the offsets have no component on those axes (one-hot features), they are drawn
    along their own two main directions.
    The picture is then scaled to unit root-mean-square norm (a GCN's layers differ in
    scale by orders of magnitude). Unlabelled rows (``-1``) are drawn with the offsets
    around the grand mean.

    Args:
        h (torch.Tensor): ``(N, F)`` node representations.
        labels (torch.Tensor): ``(N,)`` classes, ``-1`` for an unlabelled node.

    Returns:
        ``(xy, means, kept)``: ``(N, 2)`` float32 coordinates, the ``(C, 2)`` class means in
        them, and the share of the between-class spread (``tr S_B``) the two axes hold (1
        when there is none).
    """
    x = h.detach().double().cpu().numpy()
    y = labels.cpu().numpy().astype(np.int64)
    lab = y >= 0
    centre = x[lab].mean(0) if lab.any() else x.mean(0)
    xc = x - centre
    classes, inv = np.unique(y[lab], return_inverse=True)
    counts = np.bincount(inv, minlength=classes.size).astype(float)
    means = np.zeros((classes.size, x.shape[1]))
    np.add.at(means, inv, xc[lab])
    means /= np.maximum(counts, 1)[:, None]
    axes = np.zeros((x.shape[1], 2))
    kept = 1.0  # no between-class spread: the picture loses none
    if classes.size >= 2:
        _, sv, vt = np.linalg.svd(np.sqrt(counts)[:, None] * means, full_matrices=False)
        top = min(2, vt.shape[0])
        axes[:, :top] = vt[:top].T
        total = float((sv ** 2).sum())
        kept = float((sv[:top] ** 2).sum()) / total if total > 0 else 1.0
    zmeans = means @ axes
    spot = np.zeros((x.shape[0], 2))
    spot[lab] = zmeans[inv]
    resid = xc.copy()
    resid[lab] -= means[inv]
    offset = resid @ axes
    if (offset ** 2).sum() <= 1e-9 * (resid ** 2).sum():
        # the spread within classes is orthogonal to the class means (e.g. one-hot features):
        # draw it along its own two main directions instead
        offset = resid @ np.linalg.svd(resid, full_matrices=False)[2][:2].T
        offset = np.pad(offset, ((0, 0), (0, 2 - offset.shape[1])))
    between = float((spot[lab] ** 2).sum())
    within = float((offset[lab] ** 2).sum())
    sep = class_separation(h, labels)
    scale = 1.0
    if between > 0 and within > 0 and 0 < sep < 1:
        scale = math.sqrt(between * (1 - sep) / (sep * within))
    xy = spot + scale * offset
    rms = math.sqrt(float((xy ** 2).sum(1).mean())) or 1.0
    return (xy / rms).astype(np.float32), zmeans / rms, kept


def layer_pictures(hidden: Sequence[torch.Tensor], labels: torch.Tensor) -> tuple[np.ndarray, list[float]]:
    """:func:`class_picture` of every layer, each axis's sign chosen so that the class means
    move as little as possible from one layer to the next (the first layer: so that the
    largest class mean coordinate is positive).

    Args:
        hidden: ``[H^(1), ..., H^(K)]``, each ``(N, F_k)``.
        labels (torch.Tensor): ``(N,)`` classes, ``-1`` for an unlabelled node.

    Returns:
        ``(K, N, 2)`` coordinates and, per layer, the share of the between-class spread the
        two axes hold.
    """
    if not hidden:
        raise SnapshotError("no hidden layers to draw (a model needs at least 2 layers)")
    pictures, kept, before = [], [], None
    for h in hidden:  # a loop over layers, each an SVD of C class means
        xy, means, share = class_picture(h, labels)
        ref = before if before is not None else np.abs(means)
        signs = np.where((means * ref).sum(0) < 0, -1.0, 1.0).astype(np.float32)
        pictures.append(xy * signs)
        before = means * signs
        kept.append(share)
    return np.stack(pictures), kept


def view_of_model(graph: Graph, config: TrainConfig, model: torch.nn.Module, test_acc: float | None,
                  final_test_acc: float | None, epochs_run: int) -> Snapshot:
    """The per-layer view (:class:`Snapshot`) of a trained ``model`` of ``config``: its
    evaluation forward pass (full graph, eval mode), every hidden layer drawn by
    :func:`layer_pictures` and measured over all hidden units (class separation, subspace
    distance, silhouette on a fixed subset of :data:`SILHOUETTE_NODES` nodes, seed 0).

    Args:
        graph (Graph): the graph it was trained on.
        config (TrainConfig): its settings.
        model (torch.nn.Module): the trained backbone.
        test_acc (float, optional): test accuracy at the best-validation epoch.
        final_test_acc (float, optional): test accuracy of the weights shown.
        epochs_run (int): epochs trained.
    """
    device = next(model.parameters()).device
    g = graph if graph.x.device == device else graph.to(device)
    adjs = [AdjacencyBuilder(g, config.normalization).full()] * config.num_layers
    model.eval()
    with torch.no_grad():
        _, hidden = model(prepare_features(g.x), adjs, return_hidden=True)
    hidden = [h.cpu() for h in hidden]
    y = graph.y.cpu()
    proj, kept = layer_pictures(hidden, y)
    sil = [silhouette(h, y, generator=torch.Generator().manual_seed(0)) for h in hidden]
    sub = [metrics.subspace_distance(h, graph) for h in hidden]
    sep = [class_separation(h, y) for h in hidden]
    return Snapshot(config.sampler, proj, sil, sub, sep, test_acc, final_test_acc, epochs_run, kept)


def model_view(graph: Graph, config: TrainConfig,
               on_event: Callable[[dict], None] | None = None) -> Snapshot:
    """Train ``config`` on ``graph`` and return its per-layer view (:func:`view_of_model` of
    the weights after the last epoch run)."""
    if config.backbone != "gcn" or config.num_layers < 2:
        raise SnapshotError("the class view needs a GCN with at least 2 layers "
                            f"(got {config.backbone}, {config.num_layers} layers)")
    result = train(config, graph=graph, on_event=on_event)
    if result.model is None or not result.history:
        raise SnapshotError(f"training produced no model ({result.message})")
    return view_of_model(graph, config, result.model, result.test_acc, result.history[-1]["test_acc"],
                         result.epochs_run)


def stream_fingerprints(graph: Graph, base: TrainConfig, sampler_names: Sequence[str]) -> dict:
    """``{sampler: {"masks": ..., "init": ...}}``: the fingerprint of each model's run at the
    code that runs now (:func:`dropedge_explorer.training._fingerprint.fingerprint`), stored in a
    snapshot's settings so that a test can tell a snapshot of today's streams from an older one."""
    out = {}
    for name in sampler_names:
        fp = fingerprint(base.replace(sampler=name), graph)
        out[name] = {"masks": fp.masks, "init": fp.init}
    return out


def class_snapshots(graph: Graph, base: TrainConfig, sampler_names: Sequence[str] = VIEW_SAMPLERS,
                    progress: Callable[[str], None] | None = None) -> Snapshots:
    """Train ``base`` once per sampler (``base.replace(sampler=...)``) on ``graph`` and
    return the views side by side, with ``base``'s settings and each run's stream
    fingerprint (:func:`stream_fingerprints`) recorded.

    Args:
        graph (Graph): the loaded graph.
        base (TrainConfig): the settings trained (``base.sampler`` is replaced).
        sampler_names (Sequence[str], optional): the samplers trained.
            (default: :obj:`("nodrop", "dropedge", "dropedge++")`)
        progress (Callable[[str], None], optional): called with the sampler's name before
            each training. (default: :obj:`None`)
    """
    items = []
    for name in sampler_names:  # a loop over models, each a full training run
        if progress is not None:
            progress(name)
        items.append(model_view(graph, base.replace(sampler=name)))
    return Snapshots(graph.y.cpu().numpy().astype(np.int64), snapshot_settings(graph, base, sampler_names),
                     items)


def snapshot_settings(graph: Graph, base: TrainConfig, sampler_names: Sequence[str]) -> dict:
    """The settings a snapshot file records: ``base``'s, the samplers, the graph's size, the
    picture's kind and the runs' fingerprints (:func:`stream_fingerprints`)."""
    settings = {**base.to_dict(), "samplers": list(sampler_names), "picture": PICTURE,
                "graph": graph.name, "num_nodes": graph.num_nodes, "num_edges": graph.num_edges,
                "fingerprints": stream_fingerprints(graph, base, sampler_names),
                "fingerprint_epochs": FINGERPRINT_EPOCHS}
    settings.pop("sampler", None)
    return settings


def snapshot_stream(snaps: Snapshots, graph: Graph) -> str:
    """``"today"`` when every model of ``snaps`` carries the fingerprint that the code gives
    now for its settings on ``graph`` (:func:`stream_fingerprints`), else ``"older"`` (no
    fingerprint stored counts as older): only today's snapshots enter a teaching view.

    Args:
        snaps (Snapshots): a trained view (:func:`class_snapshots` or a bundled file).
        graph (Graph): the graph its models were trained on.
    """
    stored = snaps.settings.get("fingerprints")
    if not isinstance(stored, dict) or sorted(stored) != sorted(snaps.samplers):
        return "older"
    fields = {f for f in TrainConfig().to_dict()}
    try:
        base = TrainConfig.from_dict({k: v for k, v in snaps.settings.items() if k in fields})
    except ValueError:
        return "older"
    return "today" if stream_fingerprints(graph, base, snaps.samplers) == stored else "older"


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


def propagation_snapshots(graph: Graph, masks_by: dict[str, torch.Tensor], seed: int = 0) -> Snapshots:
    """What propagation alone does (no weights, no training): ``H_0 = X``,
    ``H_{l+1} = Â^(l) H_l`` with each sampler's AN-normalised kept adjacency, every step
    ``H_0 .. H_L`` drawn by :func:`layer_pictures`, with the class separation, the
    silhouette and the subspace distance per step — the same :class:`Snapshots` the
    class view draws (its "layers" are the steps, the first one ``X`` itself).

    Args:
        graph (Graph): the graph.
        masks_by (dict[str, torch.Tensor]): ``{sampler: (L, M) masks}``; ``L`` steps each.
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
        proj, kept = layer_pictures(hs, labels)
        sil = [silhouette(h, labels, generator=torch.Generator().manual_seed(0)) for h in hs]
        sub = [metrics.subspace_distance(h, g) for h in hs]
        sep = [class_separation(h, labels) for h in hs]
        items.append(Snapshot(name, proj, sil, sub, sep, None, None, 0, kept))
    layers = max((m.size(0) for m in masks_by.values()), default=0)
    settings = {"graph": g.name, "num_nodes": g.num_nodes, "num_edges": g.num_edges,
                "num_layers": layers, "propagation": "AN, no weights", "picture": PICTURE, "seed": seed}
    return Snapshots(labels.numpy().astype(np.int64), settings, items)


def receptive_field(graph: Graph, masks: torch.Tensor, node: int) -> torch.Tensor:
    """The nodes ``node`` reaches through each layer's kept edges, growing layer by layer.

    Row ``l`` of the returned ``(L, N)`` bool is the non-zero pattern of row ``node`` of
    ``Π_{i=0..l} (A^(i) + I)`` — the nodes that ``node``'s input features reach after
    layers ``0 .. l`` (each step: stay, or cross one edge kept at that layer). Summed over
    all nodes, row ``l`` counts the edge number of layer ``l`` that MEN averages
    (:func:`dropedge_core.metrics.edge_numbers`). ``masks`` ``(L, M)`` undirected or
    ``(L, 2M)`` directed (columns of ``graph.edge_index``).

    Args:
        graph (Graph): the graph the masks index.
        masks (torch.Tensor): ``(L, M)`` undirected or ``(L, 2M)`` directed bool masks.
        node (int): the node whose features spread.

    Example:
        >>> from dropedge_core.datasets import karate
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
