"""What a PyG model hands the samplers, checked before any work.

Each check raises one :class:`ValueError` that names the bad value, before anything is
allocated or drawn: a malformed ``edge_index``, node ids or a ``num_nodes`` whose graph
would not fit in memory (:func:`dropedge_core.limits.memory_limit`), non-finite features, a
generator of the wrong type or device, edge weights or attributes that do not match the
edges, and a :class:`~torch_geometric.data.HeteroData` (one edge type at a time).
"""
from __future__ import annotations

from importlib import import_module

import torch
from torch import Tensor

from dropedge_core import limits

__all__ = ["MAX_NODES", "check_edge_index", "check_edge_values", "check_features", "check_generator",
           "check_homogeneous"]

#: The most nodes an ``edge_index`` may name: an undirected edge is keyed ``lo * N + hi``,
#: which must fit an int64 (``floor(sqrt(2**63 - 1))``).
MAX_NODES = 3_037_000_499

#: How many offending rows a message lists.
_SHOWN = 5


def _shown(ids: Tensor) -> str:
    head = ", ".join(str(i) for i in ids[:_SHOWN].tolist())
    return head + (f", ... ({ids.numel()} in all)" if ids.numel() > _SHOWN else "")


def _check_size(num_nodes: int, num_edges: int, num_features: int, source: str,
                device: torch.device) -> None:
    # the mapping onto a Graph allocates (N,) labels and masks and an (N, C) float copy
    # of the features: refuse a graph whose ids ask for more than the limit before that
    if num_nodes > MAX_NODES:
        raise ValueError(f"{source}: {num_nodes} nodes is above the {MAX_NODES} an edge key can "
                         "address; relabel the node ids to 0..N-1 (torch.unique(edge_index, "
                         "return_inverse=True))")
    limits.check(limits.graph_bytes(num_nodes, num_edges, num_features), f"{source} (N={num_nodes})",
                 hint="relabel the node ids to 0..N-1 (torch.unique(edge_index, return_inverse=True)) "
                      "or pass the real num_nodes", device=device)


def check_edge_index(edge_index: Tensor, num_nodes: int | None = None,
                     x: Tensor | None = None) -> int:
    r"""Validate ``edge_index`` (and ``num_nodes``, ``x``); return the number of nodes.

    Args:
        edge_index (LongTensor): The edge indices, shape :obj:`(2, E)`, any integer dtype.
        num_nodes (int, optional): The number of nodes. (default: :obj:`x.size(0)` when
            :obj:`x` is given, else :obj:`max_id + 1`)
        x (Tensor, optional): Node features, shape :obj:`(N, C)`. (default: :obj:`None`)

    Raises:
        ValueError: the first defect found, naming the value and what is allowed; a graph
            of more nodes than fit in memory (:func:`dropedge_core.limits.check`) before
            anything of that size is allocated.

    Example:
        >>> check_edge_index(torch.tensor([[0, 1], [1, 2]]))
        3
        >>> check_edge_index(torch.tensor([[0, 1], [1, 5]]), num_nodes=3)
        Traceback (most recent call last):
        ...
        ValueError: edge_index holds node id 5 but num_nodes=3; ids must be in [0, 3)
    """
    if not isinstance(edge_index, Tensor):
        hint = "; a heterogeneous graph: one edge type at a time" if isinstance(edge_index, dict) else ""
        raise ValueError("edge_index must be a torch.Tensor of shape (2, E) "
                         f"(got {type(edge_index).__name__}){hint}")
    if edge_index.dim() != 2 or edge_index.size(0) != 2:
        raise ValueError(f"edge_index must have shape (2, E) (got {tuple(edge_index.shape)})")
    if edge_index.dtype == torch.bool or edge_index.is_floating_point() or edge_index.is_complex():
        raise ValueError(f"edge_index must hold integer node ids (got dtype {edge_index.dtype}); "
                         "use edge_index.long()")
    if x is not None:
        if not isinstance(x, Tensor) or x.dim() != 2:
            shape = tuple(x.shape) if isinstance(x, Tensor) else type(x).__name__
            raise ValueError(f"x must be a (num_nodes, num_features) tensor (got {shape})")
        if not x.is_floating_point():
            raise ValueError(f"x must hold floating point features (got dtype {x.dtype})")
    if num_nodes is not None and (isinstance(num_nodes, bool) or not isinstance(num_nodes, int)
                                  or num_nodes < 0):
        raise ValueError(f"num_nodes must be a non-negative integer (got {num_nodes!r})")
    low = high = None
    if edge_index.numel():
        low, high = int(edge_index.min()), int(edge_index.max())
        if low < 0:
            raise ValueError(f"edge_index holds a negative node id ({low}); ids must be in "
                             f"[0, {num_nodes if num_nodes is not None else 'num_nodes'})")
    source = f"num_nodes={num_nodes}"
    if num_nodes is None:
        if x is not None:
            num_nodes, source = int(x.size(0)), f"x of {x.size(0)} rows"
        else:
            num_nodes = high + 1 if high is not None else 0
            source = f"edge_index with node id {high}"
    if x is not None and x.size(0) != num_nodes:
        raise ValueError(f"x has {x.size(0)} rows but num_nodes={num_nodes}; one row per node is needed")
    if high is not None and high >= num_nodes:
        raise ValueError(f"edge_index holds node id {high} but num_nodes={num_nodes}; "
                         f"ids must be in [0, {num_nodes})")
    _check_size(num_nodes, int(edge_index.size(1)), int(x.size(1)) if x is not None else 0, source,
                edge_index.device)
    return num_nodes


def check_features(x: Tensor) -> None:
    """Refuse node features with NaN or inf: a kernel weight computed from them is NaN,
    which the samplers' keys order last, so the node's edges would silently never be kept.

    Args:
        x (Tensor): Node features, shape :obj:`(N, C)`.

    Raises:
        ValueError: naming the rows (nodes) that hold a non-finite value.

    Example:
        >>> check_features(torch.tensor([[1.0, 0.0], [float("nan"), 1.0]]))
        Traceback (most recent call last):
        ...
        ValueError: x holds NaN or inf in 1 row(s) (node 1): the kernel samplers need finite features
    """
    dense = x.to_dense() if x.layout != torch.strided else x
    # a NaN or inf makes its row's sum NaN or inf, so finite row sums clear every row in one
    # pass (~15x cheaper than isfinite on Cora's x, at every fresh-graph call); a non-finite
    # sum may also be an overflow of finite values: the rows are then checked one by one
    if dense.is_floating_point() and bool(torch.isfinite(dense.sum(dim=1)).all()):
        return
    bad = ~torch.isfinite(dense).all(dim=1) if dense.size(1) else torch.zeros(0, dtype=torch.bool)
    if bool(bad.any()):
        rows = bad.nonzero().flatten()
        raise ValueError(f"x holds NaN or inf in {rows.numel()} row(s) (node {_shown(rows)}): "
                         "the kernel samplers need finite features")


def check_generator(generator: object, device: torch.device | None = None) -> None:
    """Refuse a ``generator`` that is not a :class:`torch.Generator` (``None`` is torch's
    global one), or that draws on another device than ``device`` (the edges').

    Args:
        generator (torch.Generator, optional): The random source to check.
        device (torch.device, optional): Where the edges are. (default: :obj:`None`:
            any device)

    Raises:
        ValueError: not a generator, or one on another device.

    Example:
        >>> check_generator(42)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        ValueError: generator must be a torch.Generator or None (got int 42); e.g. ...
    """
    if generator is None:
        return
    if not isinstance(generator, torch.Generator):
        raise ValueError(f"generator must be a torch.Generator or None (got {type(generator).__name__} "
                         f"{generator!r}); e.g. torch.Generator().manual_seed(42)")
    if device is not None:
        here, there = torch.device(generator.device), torch.device(device)
        if here.type != there.type or (here.index or 0) != (there.index or 0):
            raise ValueError(f"the generator is on {here} but edge_index is on {there}; "
                             f"use torch.Generator(device={str(there)!r}) (a module's .to() moves its own)")


def check_edge_values(name: str, values: Tensor | None, num_edges: int) -> None:
    """Refuse ``edge_weight`` (``(E,)``) or ``edge_attr`` (``(E, ...)``) that do not have
    one row per ``edge_index`` column, or an edge weight that is not a finite float
    (``edge_attr`` may be of any dtype: an integer edge type is a feature).

    Args:
        name (str): :obj:`"edge_weight"` or :obj:`"edge_attr"`, as the message calls it.
        values (Tensor, optional): The values (:obj:`None` passes).
        num_edges (int): The number of :obj:`edge_index` columns :obj:`E`.

    Raises:
        ValueError: a wrong shape, an edge weight of an integer, bool or complex dtype
            (no normalisation computes with it), or a NaN/inf edge weight.

    Example:
        >>> check_edge_values("edge_weight", torch.ones(3, 2), 3)
        Traceback (most recent call last):
        ...
        ValueError: edge_weight must have shape (3,), one value per edge_index column (got (3, 2))
    """
    if values is None:
        return
    if name == "edge_weight":
        if not isinstance(values, Tensor) or values.dim() != 1 or values.size(0) != num_edges:
            shape = tuple(values.shape) if isinstance(values, Tensor) else type(values).__name__
            raise ValueError(f"edge_weight must have shape ({num_edges},), one value per edge_index "
                             f"column (got {shape})")
        if not values.is_floating_point():  # gcn_norm and the degree sums compute in floats
            raise ValueError(f"edge_weight must hold floating point weights (got dtype {values.dtype}); "
                             "use edge_weight.float()")
        if not bool(torch.isfinite(values).all()):
            cols = (~torch.isfinite(values)).nonzero().flatten()
            raise ValueError(f"edge_weight holds NaN or inf at column(s) {_shown(cols)}")
        return
    if not isinstance(values, Tensor) or values.dim() == 0 or values.size(0) != num_edges:
        shape = tuple(values.shape) if isinstance(values, Tensor) else type(values).__name__
        raise ValueError(f"{name} must have {num_edges} rows, one per edge_index column (got {shape})")


def check_homogeneous(data: object) -> None:
    """Refuse a :class:`~torch_geometric.data.HeteroData`: the samplers draw over one
    edge set (pass ``data[edge_type].edge_index`` of one edge type instead).

    Args:
        data (object): A PyG data object (anything but a
            :class:`~torch_geometric.data.HeteroData` passes).

    Raises:
        ValueError: :obj:`data` is a :class:`~torch_geometric.data.HeteroData`.
    """
    HeteroData = import_module("torch_geometric.data").HeteroData

    if isinstance(data, HeteroData):
        raise ValueError("HeteroData is not supported: DropEdge++ samples one homogeneous edge set; "
                         "sample one edge type at a time (data[edge_type].edge_index) or "
                         "data.to_homogeneous()")
