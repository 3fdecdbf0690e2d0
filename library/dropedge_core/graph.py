"""The :class:`Graph` every part of ``dropedge_core`` works on.

A graph is undirected and simple: ``undirected_edges`` holds each of its ``M`` edges
once, as a ``(2, M)`` tensor with ``u < v``; ``edge_index`` holds both directions,
``edge_index[:, j]`` and ``edge_index[:, j + M]`` being the two directions of
undirected edge ``j``. Samplers return masks over the ``M`` undirected edges (or over
the ``2M`` columns of ``edge_index`` when they sample directions separately).
"""
from __future__ import annotations

import threading
import warnings
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import TypeVar

import torch

__all__ = [
    "T", "csr_tensor", "to_csr", "GraphError", "Derived", "Graph", "simple_undirected_edges",
    "l1_normalize_rows",
]

T = TypeVar("T")

# torch warns that CSR support is "beta" and that sparse invariant checks are off; our CSR
# matrices are built from validated indices, so the two warnings are silenced where we
# build them (here), never process-wide.
_CSR_NOISE = r".*(Sparse CSR tensor support is in beta|Sparse invariant checks are implicitly disabled).*"


def csr_tensor(crow: torch.Tensor, col: torch.Tensor, values: torch.Tensor,
               size: tuple[int, int]) -> torch.Tensor:
    """``torch.sparse_csr_tensor(crow, col, values, size)`` without torch's beta warnings.

    Args:
        crow (Tensor): ``(R + 1,)`` long, the row pointers.
        col (Tensor): ``(nnz,)`` long, the column of each entry.
        values (Tensor): ``(nnz,)``, the value of each entry.
        size (tuple[int, int]): the matrix's shape ``(R, C)``.

    Returns:
        Tensor: a sparse CSR ``(R, C)`` tensor.
    """
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=_CSR_NOISE)
        return torch.sparse_csr_tensor(crow, col, values, size)


def to_csr(x: torch.Tensor) -> torch.Tensor:
    """``x.to_sparse_csr()`` (dense or coalesced COO ``x``) without torch's beta warnings.

    Args:
        x (Tensor): a 2-D dense or coalesced sparse COO tensor.

    Returns:
        Tensor: the same matrix in sparse CSR layout.
    """
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=_CSR_NOISE)
        return x.to_sparse_csr()


class GraphError(ValueError):
    """A graph (built in, downloaded or uploaded) is malformed."""


class Derived:
    """What a graph's tensors determine (both edge directions, the CSR entries, kernel
    weights, components), each computed once per ``(builder, arguments)``.

    Graphs are shared across app sessions and training threads, so a value is built
    outside any lock and published in one assignment of a fresh mapping (copy on write):
    a reader sees a value whole or not at all, and two threads that race to build the
    same value both return the one published first (the other copy is dropped).
    Keys are the builder functions themselves, never strings, so each value has one
    typed producer (:meth:`Graph.derived`).
    """

    def __init__(self) -> None:
        self._values: dict[tuple, object] = {}
        self._lock = threading.Lock()

    def get(self, graph: Graph, build: Callable[..., T], args: tuple) -> T:
        key = (build, *args)
        found = self._values.get(key, self)  # self: a sentinel no builder returns
        if found is not self:
            return found  # type: ignore[return-value]
        value = build(graph, *args)
        with self._lock:  # publish once: the first value built wins
            if key not in self._values:
                self._values = {**self._values, key: value}
            return self._values[key]  # type: ignore[return-value]

    def __len__(self) -> int:
        return len(self._values)

    def __reduce__(self) -> tuple:
        # a pickled or deep-copied graph starts with an empty memo (a lock cannot be
        # pickled, and the values are rebuilt on first use), as Graph.to does
        return Derived, ()


@dataclass(eq=False)
class Graph:
    """A node-classification graph.

    Args:
        name (str): dataset name (``"cora"``, ``"karate"``, ...).
        x (Tensor): ``(N, C)`` float node features, rows L1-normalised (zero rows stay zero).
        y (Tensor): ``(N,)`` long labels; ``-1`` marks an unlabelled node.
        undirected_edges (Tensor): ``(2, M)`` long, each undirected edge once, ``u < v``,
            sorted, no self-loops, no duplicates.
        train_mask (Tensor): ``(N,)`` bool, the training nodes.
        val_mask (Tensor): ``(N,)`` bool, the validation nodes (disjoint from the others).
        test_mask (Tensor): ``(N,)`` bool, the test nodes (disjoint from the others).
        num_classes (int): number of classes.
        info (dict, optional): free-form provenance (where the data came from, split rule).
            (default: :obj:`{}`)

    Example:
        >>> edges = simple_undirected_edges(torch.tensor([[0, 1, 2], [1, 2, 0]]), 3)
        >>> none = torch.zeros(3, dtype=torch.bool)
        >>> g = Graph("triangle", torch.eye(3), torch.tensor([0, 1, 1]), edges, none, none, none, 2)
        >>> g.num_nodes, g.num_edges, g.edge_index.size(1)
        (3, 3, 6)
    """

    name: str
    x: torch.Tensor
    y: torch.Tensor
    undirected_edges: torch.Tensor
    train_mask: torch.Tensor
    val_mask: torch.Tensor
    test_mask: torch.Tensor
    num_classes: int
    info: dict = field(default_factory=dict)
    # What the tensors above determine, built on first use (:meth:`derived`); never part
    # of the graph's identity, never carried by :meth:`to`.
    _derived: Derived = field(default_factory=Derived, repr=False, init=False)

    @property
    def num_nodes(self) -> int:
        return int(self.x.size(0))

    @property
    def num_edges(self) -> int:
        """``M``: the number of undirected edges."""
        return int(self.undirected_edges.size(1))

    @property
    def num_features(self) -> int:
        return int(self.x.size(1))

    @property
    def edge_index(self) -> torch.Tensor:
        """``(2, 2M)``: both directions; column ``j + M`` is column ``j`` reversed."""
        return self.derived(_both_directions)

    def derived(self, build: Callable[..., T], *args: Hashable) -> T:
        """``build(self, *args)``, computed once per graph and published whole.

        Safe from several threads at once (:class:`Derived`). ``build`` must depend only
        on the graph's tensors and ``args`` (which must be hashable), and its result must
        not be modified by callers.

        Example:
            >>> g = Graph("tiny", torch.eye(3), torch.zeros(3, dtype=torch.long),
            ...           torch.tensor([[0], [1]]), *[torch.zeros(3, dtype=torch.bool)] * 3, 1)
            >>> g.derived(lambda graph: graph.num_edges * 2)
            2
        """
        return self._derived.get(self, build, args)

    def directed_mask(self, masks: torch.Tensor) -> torch.Tensor:
        """Widen ``(..., M)`` undirected masks to ``(..., 2M)`` masks over ``edge_index``.

        Masks that already have ``2M`` columns (directed sampling) pass unchanged.
        """
        m = self.num_edges
        if masks.size(-1) == 2 * m:
            return masks
        if masks.size(-1) != m:
            raise GraphError(f"mask width {masks.size(-1)} matches neither M={m} nor 2M={2 * m}")
        return torch.cat([masks, masks], dim=-1)

    def to(self, device: torch.device | str) -> Graph:
        """A copy with every tensor on ``device`` (the memo is not carried)."""
        return Graph(
            name=self.name,
            x=self.x.to(device),
            y=self.y.to(device),
            undirected_edges=self.undirected_edges.to(device),
            train_mask=self.train_mask.to(device),
            val_mask=self.val_mask.to(device),
            test_mask=self.test_mask.to(device),
            num_classes=self.num_classes,
            info=dict(self.info),
        )

    def __repr__(self) -> str:
        return (
            f"Graph({self.name}: N={self.num_nodes}, M={self.num_edges}, "
            f"C={self.num_features}, classes={self.num_classes}, "
            f"train/val/test={int(self.train_mask.sum())}/{int(self.val_mask.sum())}/"
            f"{int(self.test_mask.sum())})"
        )


def _both_directions(graph: Graph) -> torch.Tensor:
    u, v = graph.undirected_edges
    return torch.stack([torch.cat([u, v]), torch.cat([v, u])])


def simple_undirected_edges(edge_index: torch.Tensor, num_nodes: int) -> torch.Tensor:
    """Each undirected edge of ``edge_index`` once, as ``(2, M)`` with ``u < v``, sorted.

    Self-loops and duplicates (in either direction) are removed.

    Args:
        edge_index (Tensor): ``(2, E)`` integer, edges in any direction and order.
        num_nodes (int): the number of nodes :math:`N` (every id below it).

    Returns:
        Tensor: ``(2, M)`` long.

    Example:
        >>> simple_undirected_edges(torch.tensor([[0, 1, 1, 2, 2], [1, 0, 1, 0, 1]]), 3)
        tensor([[0, 0, 1],
                [1, 2, 2]])
    """
    u, v = edge_index[0].long(), edge_index[1].long()
    keep = u != v
    lo, hi = torch.minimum(u[keep], v[keep]), torch.maximum(u[keep], v[keep])
    key = torch.unique(lo * num_nodes + hi)  # unique also sorts
    return torch.stack([key // num_nodes, key % num_nodes])


def l1_normalize_rows(x: torch.Tensor) -> torch.Tensor:
    """Rows divided by their L1 norm; a zero row stays zero (never NaN).

    Args:
        x (Tensor): ``(N, C)`` features.

    Returns:
        Tensor: ``(N, C)`` float32.

    Example:
        >>> l1_normalize_rows(torch.tensor([[1.0, 3.0], [0.0, 0.0]]))
        tensor([[0.2500, 0.7500],
                [0.0000, 0.0000]])
    """
    x = x.float()
    norm = x.abs().sum(dim=1, keepdim=True)
    return x / norm.clamp(min=torch.finfo(x.dtype).tiny)
