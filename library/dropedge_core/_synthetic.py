"""The built-in graphs: Zachary's karate club (ships with PyG) and a contextual stochastic
block model generated here; both need no files."""
from __future__ import annotations

from importlib import import_module

import torch

from dropedge_core._errors import DatasetError
from dropedge_core._splits import per_class_split
from dropedge_core.graph import Graph, l1_normalize_rows, simple_undirected_edges


def karate(seed: int = 0) -> Graph:
    """Zachary's karate club (PyG ``KarateClub``): 34 nodes, 78 edges, 4 classes.

    Features are one-hot node ids (so every feature kernel is flat); split 2 / 2 per
    class, the rest test.

    Args:
        seed (int, optional): the seed of the split. (default: :obj:`0`)

    Returns:
        Graph: the graph.
    """
    data = import_module("torch_geometric.datasets").KarateClub()[0]
    train, val, test = per_class_split(data.y, 2, 2, torch.Generator().manual_seed(seed))
    return Graph("karate", l1_normalize_rows(data.x), data.y.long(),
                 simple_undirected_edges(data.edge_index, data.num_nodes), train, val, test,
                 int(data.y.max()) + 1, {"source": "built-in", "split": f"2/2 per class, seed {seed}"})


def csbm(num_nodes: int = 600, num_classes: int = 3, p_intra: float = 0.03,
         p_inter: float = 0.004, num_features: int = 60, feature_signal: float = 0.5,
         seed: int = 0) -> Graph:
    """A contextual stochastic block model, generated locally.

    Nodes get balanced random classes; an edge joins two nodes with probability
    ``p_intra`` inside a class and ``p_inter`` across. Features are a bag of words: every
    feature is on with probability 0.05, and the ``num_features / num_classes`` features
    of a node's own class with probability ``0.05 + 0.3 * feature_signal`` — so feature
    similarity carries class signal and the feature-dependent sampler (FD) has something
    to find. Split: 20 / 30 per class, the rest test.

    Edges are drawn per class pair (a binomial count, then uniform pairs): no
    ``N x N`` matrix, so 50k nodes are fine.

    Args:
        num_nodes (int, optional): :math:`N`, at least ``2 * num_classes``.
            (default: :obj:`600`)
        num_classes (int, optional): the number of classes (blocks). (default: :obj:`3`)
        p_intra (float, optional): edge probability inside a class. (default: :obj:`0.03`)
        p_inter (float, optional): edge probability across classes. (default: :obj:`0.004`)
        num_features (int, optional): the bag of words' size, at least ``num_classes``.
            (default: :obj:`60`)
        feature_signal (float, optional): in ``[0, 1]``, how much more often a node's
            own class's words are on. (default: :obj:`0.5`)
        seed (int, optional): the seed of the graph, its features and its split.
            (default: :obj:`0`)

    Returns:
        Graph: the graph, its parameters in ``info["params"]``.

    Raises:
        DatasetError: a probability outside ``[0, 1]`` or sizes that do not fit.

    Example:
        >>> g = csbm(num_nodes=60, num_classes=2, seed=1)
        >>> g.num_nodes, g.num_classes, g.num_features, int(g.train_mask.sum())  # 20 per class
        (60, 2, 60, 40)
    """
    for pname, p in (("p_intra", p_intra), ("p_inter", p_inter), ("feature_signal", feature_signal)):
        if not 0.0 <= p <= 1.0:
            raise DatasetError(f"csbm {pname} must be in [0, 1] (got {p})")
    if num_nodes < 2 * num_classes or num_classes < 1 or num_features < num_classes:
        raise DatasetError(f"csbm needs num_nodes >= 2*num_classes and num_features >= num_classes "
                           f"(got {num_nodes}, {num_classes}, {num_features})")
    g = torch.Generator().manual_seed(seed)
    y = torch.arange(num_nodes) % num_classes
    y = y[torch.randperm(num_nodes, generator=g)]
    members = [torch.nonzero(y == c).flatten() for c in range(num_classes)]
    pieces = []
    for a in range(num_classes):  # a loop over class pairs, not over nodes or edges
        for b in range(a, num_classes):
            na, nb = members[a].numel(), members[b].numel()
            pairs = na * (na - 1) / 2 if a == b else na * nb
            p = p_intra if a == b else p_inter
            count = int(torch.binomial(torch.tensor(float(pairs)), torch.tensor(p), generator=g))
            u = members[a][torch.randint(na, (count,), generator=g)]
            v = members[b][torch.randint(nb, (count,), generator=g)]
            pieces.append(torch.stack([u, v]))
    edges = simple_undirected_edges(torch.cat(pieces, dim=1), num_nodes)
    block = torch.arange(num_features) * num_classes // num_features  # class owning a feature
    prob = torch.full((num_nodes, num_features), 0.05)
    prob[block.unsqueeze(0) == y.unsqueeze(1)] += 0.3 * feature_signal
    x = torch.bernoulli(prob, generator=g)
    train, val, test = per_class_split(y, 20, 30, g)
    return Graph("csbm", l1_normalize_rows(x), y, edges, train, val, test, num_classes,
                 {"source": "built-in", "split": f"20/30 per class, seed {seed}",
                  "params": dict(num_nodes=num_nodes, num_classes=num_classes, p_intra=p_intra,
                                 p_inter=p_inter, num_features=num_features,
                                 feature_signal=feature_signal, seed=seed)})
