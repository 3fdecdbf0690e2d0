"""The :class:`Graph` every part of ``dropedge_core`` works on.

A graph is undirected and simple: ``undirected_edges`` holds each of its ``M`` edges
once, as a ``(2, M)`` tensor with ``u < v``; ``edge_index`` holds both directions,
``edge_index[:, j]`` and ``edge_index[:, j + M]`` being the two directions of
undirected edge ``j``. Samplers return masks over the ``M`` undirected edges (or over
the ``2M`` columns of ``edge_index`` when they sample directions separately).
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import torch

# torch warns that CSR support is "beta" and that sparse invariant checks are off; our CSR
# matrices are built from validated indices, so the two warnings are silenced where we
# build them (here), never process-wide.
_CSR_NOISE = r".*(Sparse CSR tensor support is in beta|Sparse invariant checks are implicitly disabled).*"


def csr_tensor(crow: torch.Tensor, col: torch.Tensor, values: torch.Tensor,
               size: tuple[int, int]) -> torch.Tensor:
    """``torch.sparse_csr_tensor(crow, col, values, size)`` without torch's beta warnings."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=_CSR_NOISE)
        return torch.sparse_csr_tensor(crow, col, values, size)


def to_csr(x: torch.Tensor) -> torch.Tensor:
    """``x.to_sparse_csr()`` (dense or coalesced COO ``x``) without torch's beta warnings."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=_CSR_NOISE)
        return x.to_sparse_csr()


class GraphError(ValueError):
    """A graph (built in, downloaded or uploaded) is malformed."""


@dataclass(eq=False)
class Graph:
    """A node-classification graph.

    Attributes:
        name: dataset name (``"cora"``, ``"karate"``, ...).
        x: ``(N, C)`` float node features, rows L1-normalised (zero rows stay zero).
        y: ``(N,)`` long labels; ``-1`` marks an unlabelled node.
        undirected_edges: ``(2, M)`` long, each undirected edge once, ``u < v``,
            sorted, no self-loops, no duplicates.
        train_mask, val_mask, test_mask: ``(N,)`` bool split masks (disjoint).
        num_classes: number of classes.
        info: free-form provenance (where the data came from, split rule).
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
    # Per-graph memo (kernel weights, layouts); never part of the graph's identity.
    cache: dict = field(default_factory=dict, repr=False)

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
        if "edge_index" not in self.cache:
            u, v = self.undirected_edges
            self.cache["edge_index"] = torch.stack([torch.cat([u, v]), torch.cat([v, u])])
        return self.cache["edge_index"]

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


def simple_undirected_edges(edge_index: torch.Tensor, num_nodes: int) -> torch.Tensor:
    """Each undirected edge of ``edge_index`` once, as ``(2, M)`` with ``u < v``, sorted.

    Self-loops and duplicates (in either direction) are removed.

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
    """Rows divided by their L1 norm; a zero row stays zero (never NaN)."""
    x = x.float()
    norm = x.abs().sum(dim=1, keepdim=True)
    return x / norm.clamp(min=torch.finfo(x.dtype).tiny)
