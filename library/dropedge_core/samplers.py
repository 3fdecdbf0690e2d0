"""Edge samplers of DropEdge++ (paper §3, Algorithm 1).

Every sampler is a point in a two-axis design:

* **layer relation** — how the ``L`` layers' edge sets relate:
  ``"all"`` (keep everything: NoDrop), ``"shared"`` (one sample for every layer:
  DropEdge, FD), ``"independent"`` (one sample per layer: LI), ``"increasing"``
  (LID, nested: ``mask[l] ⊆ mask[l+1]``, the bottom layer sparsest) and
  ``"decreasing"`` (LDD, nested the other way: ``mask[l] ⊇ mask[l+1]``).
* **weighting** — ``"uniform"`` or ``"kernel"`` (the feature-dependent sampler, FD:
  an edge is drawn with probability proportional to a kernel of its end points'
  features).

``make(name)`` gives the paper's named points (``nodrop``, ``dropedge``, ``li``,
``lid``, ``ldd``, ``fd``, ``dropedge++``); any other point is
``EdgeSampler(relation, weighting, ...)``, e.g. LI with kernel weights.

Rates ``p_min``, ``p_max`` are **keep** rates. Layer ``l = 0`` is the input layer and
keeps ``k_l = floor(M * (p_min + (p_max - p_min) * l / (L - 1)))`` edges (LID and LI);
LDD keeps the mirrored counts ``k_{L-1-l}`` so that its bottom layer is the densest.

Weighted sampling without replacement is successive sampling (draw one edge at a time
with probability proportional to its weight); Gumbel keys + top-k give exactly that
distribution in one vectorised pass.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

from dropedge_core import _nested_draws as nested_draws
from dropedge_core import _segment_draws as segment_draws
from dropedge_core.graph import Graph
from dropedge_core.limits import MAX_LAYERS

__all__ = [
    "RELATIONS", "WEIGHTINGS", "KERNELS", "RBF_GAMMA", "KERNEL_FLOOR", "NAMED", "NAMES", "SamplerError",
    "check_rates", "check_layers", "p_max_prime", "p_max_from_prime", "keep_counts", "kernel_weights",
    "successive_sample", "independent_masks", "nested_masks", "EdgeSampler", "make",
]

RELATIONS = ("all", "shared", "independent", "increasing", "decreasing")
WEIGHTINGS = ("uniform", "kernel")
KERNELS = ("linear", "poly", "rbf", "reverse")
RBF_GAMMA = 6.0  # the paper's appendix: exp(-6 ||x_u - x_v||^2), chosen by validation
KERNEL_FLOOR = 1e-10  # keeps zero-similarity edges drawable

# name -> (layer relation, weighting)
NAMED: dict[str, tuple[str, str]] = {
    "nodrop": ("all", "uniform"),
    "dropedge": ("shared", "uniform"),
    "li": ("independent", "uniform"),
    "lid": ("increasing", "uniform"),
    "ldd": ("decreasing", "uniform"),
    "fd": ("shared", "kernel"),
    "dropedge++": ("increasing", "kernel"),
}
NAMES: tuple[str, ...] = tuple(NAMED)


class SamplerError(ValueError):
    """Bad sampler name or parameter; the message names the value and what is allowed."""


def check_rates(p_min: float, p_max: float, names: tuple[str, str] = ("p_min", "p_max")) -> None:
    """Raise :class:`SamplerError` unless ``0 <= p_min <= p_max <= 1``.

    Args:
        p_min (float): the keep rate of the sparsest layer.
        p_max (float): the keep rate of the densest layer.
        names (tuple[str, str], optional): what the message calls the two rates
            (``("p", "p")`` for DropEdge's one rate: ``--p inf`` is no bad p_min).
            (default: :obj:`("p_min", "p_max")`)

    Raises:
        SamplerError: a rate outside ``[0, 1]`` (or NaN, or not a number), or
            ``p_min > p_max``; the message names the value.
    """
    for pname, p in zip(names, (p_min, p_max)):
        if not isinstance(p, (int, float)) or not 0.0 <= p <= 1.0 or math.isnan(p):
            raise SamplerError(f"{pname} must be a keep rate in [0, 1] (got {p!r})")
    if p_min > p_max:
        raise SamplerError(f"p_min must be <= p_max (got p_min={p_min}, p_max={p_max})")


def check_layers(num_layers: int, max_layers: int = MAX_LAYERS) -> None:
    """Raise :class:`SamplerError` unless ``num_layers`` is an integer in ``1..max_layers``.

    Args:
        num_layers (int): the depth :math:`L`.
        max_layers (int, optional): the largest depth allowed.
            (default: :data:`~dropedge_core.limits.MAX_LAYERS`)
    """
    # a bool is an int to Python: True would be one layer, silently
    if isinstance(num_layers, bool) or not isinstance(num_layers, int) or not 1 <= num_layers <= max_layers:
        raise SamplerError(f"num_layers must be an integer in 1..{max_layers} (got {num_layers!r})")


def p_max_prime(p_min: float, p_max: float) -> float:
    """The paper's hyperparameter ``p_max' = (p_max - p_min) / (1 - p_min)`` (appendix).

    ``p_min = 1`` leaves ``p_max'`` undefined; it is taken as 0.

    Args:
        p_min (float): the keep rate of the sparsest layer.
        p_max (float): the keep rate of the densest layer.

    Example:
        >>> p_max_prime(0.5, 0.75)
        0.5
    """
    check_rates(p_min, p_max)
    return 0.0 if p_min >= 1.0 else (p_max - p_min) / (1.0 - p_min)


def p_max_from_prime(p_min: float, p_max_prime: float) -> float:
    """Inverse of :func:`p_max_prime`: ``p_max = p_min + p_max' * (1 - p_min)``.

    Args:
        p_min (float): the keep rate of the sparsest layer.
        p_max_prime (float): the paper's ``p_max'`` in ``[0, 1]``.

    Example:
        >>> p_max_from_prime(0.5, 0.5)
        0.75
    """
    check_rates(p_min, p_min)
    if not 0.0 <= p_max_prime <= 1.0:
        raise SamplerError(f"p_max' must be in [0, 1] (got {p_max_prime!r})")
    return p_min + p_max_prime * (1.0 - p_min)


def keep_counts(num_edges: int | torch.Tensor, num_layers: int, p_min: float, p_max: float) -> torch.Tensor:
    """Edges kept per layer, ``(L,)`` long, layer 0 = input layer.

    ``k_l = floor(M * (p_min + (p_max - p_min) * l / (L - 1)))``; for ``L = 1``,
    ``k_0 = floor(M * p_max)``.

    Args:
        num_edges (int or Tensor): the number of edges :math:`M` to keep from, or a
            ``(B,)`` long tensor of them (the graphs of a batch): each row its own counts,
            the same numbers as ``keep_counts(int(num_edges[b]), ...)``.
        num_layers (int): the depth :math:`L`.
        p_min (float): the keep rate of layer 0 (the sparsest).
        p_max (float): the keep rate of layer ``L - 1`` (the densest).

    Returns:
        Tensor: ``(L,)`` long (``(B, L)`` for a tensor ``num_edges``), each count in ``0..M``.

    Example:
        >>> keep_counts(100, 3, 0.2, 0.6)
        tensor([20, 40, 60])
        >>> keep_counts(torch.tensor([100, 10]), 3, 0.2, 0.6)
        tensor([[20, 40, 60],
                [ 2,  4,  6]])
    """
    check_rates(p_min, p_max)
    check_layers(num_layers, max_layers=10**6)
    if num_layers == 1:
        rates = torch.tensor([p_max], dtype=torch.float64)
    else:
        rates = p_min + (p_max - p_min) * torch.arange(num_layers, dtype=torch.float64) / (num_layers - 1)
    # the 1e-9 guards floor against 0.1 * 3 = 0.30000000000000004-style float noise
    if isinstance(num_edges, torch.Tensor):  # M * rate in float64 as for a Python int M
        sizes = num_edges.to(torch.float64).unsqueeze(-1).cpu()
        return torch.floor(sizes * rates + 1e-9).long().clamp_min(0).minimum(sizes.long())
    return torch.floor(num_edges * rates + 1e-9).long().clamp(0, num_edges)


def kernel_weights(x: torch.Tensor, edges: torch.Tensor, kernel: str = "linear",
                   gamma: float = RBF_GAMMA) -> torch.Tensor:
    """Kernel weight of every edge, ``(E,)`` float, from features ``x`` ``(N, C)``.

    ``linear``: x_u·x_v; ``poly``: (x_u·x_v)^2; ``rbf``: exp(-gamma ||x_u - x_v||^2);
    ``reverse``: 1 - x_u·x_v (the paper's control). Each value is clipped at 0 (real
    features can give negative dot products), then ``1e-10`` is added so that edges
    with zero similarity stay drawable. O(E·C), vectorised, chunked over edges to bound
    memory.

    Args:
        x (Tensor): node features, ``(N, C)``.
        edges (Tensor): ``(2, E)`` long, the end points of each edge.
        kernel (str, optional): one of :data:`KERNELS`. (default: :obj:`"linear"`)
        gamma (float, optional): the ``rbf`` kernel's bandwidth. (default: :data:`RBF_GAMMA`)

    Returns:
        Tensor: ``(E,)`` float32, every weight ``>= 1e-10``.

    Raises:
        SamplerError: an unknown ``kernel``.

    Example:
        >>> x = torch.tensor([[1.0, 0.0], [0.5, 0.5], [0.0, 1.0]])
        >>> kernel_weights(x, torch.tensor([[0, 1], [1, 2]]))
        tensor([0.5000, 0.5000])
    """
    if kernel not in KERNELS:
        raise SamplerError(f"unknown kernel {kernel!r}; valid: {', '.join(KERNELS)}")
    u, v = edges
    x = x.float()
    if torch.compiler.is_compiling():  # one pass: a loop over a symbolic edge count would not trace
        out = (x[u] - x[v]).square().sum(1) if kernel == "rbf" else (x[u] * x[v]).sum(1)
        return _kernel_of(out, kernel, gamma)
    out = torch.empty(u.numel(), dtype=torch.float32, device=x.device)
    # cache-sized chunks into reused buffers on the CPU (fresh 64 MB gathers per chunk
    # cost more in page faults than in arithmetic); one chunk of ~64 MB on an accelerator
    budget = (1 << 24) if x.device.type != "cpu" else (1 << 17)
    chunk = max(1, min(u.numel(), budget // max(1, x.size(1))))
    xu = torch.empty(chunk, x.size(1), device=x.device)
    xv = torch.empty_like(xu)
    for s in range(0, u.numel(), chunk):  # a loop over chunks of edges
        e = min(s + chunk, u.numel())
        a, b = xu[:e - s], xv[:e - s]
        torch.index_select(x, 0, u[s:e], out=a)
        torch.index_select(x, 0, v[s:e], out=b)
        if kernel == "rbf":
            torch.sum(a.sub_(b).square_(), 1, out=out[s:e])
        else:
            torch.sum(a.mul_(b), 1, out=out[s:e])
    return _kernel_of(out, kernel, gamma)


def _kernel_of(out: torch.Tensor, kernel: str, gamma: float) -> torch.Tensor:
    """The kernel of ``out`` (dot products; squared distances for ``rbf``), in place, clipped
    at 0, plus :data:`KERNEL_FLOOR`."""
    if kernel == "rbf":
        out.mul_(-gamma).exp_()
    elif kernel == "poly":
        out.square_()
    elif kernel == "reverse":
        out.neg_().add_(1.0)
    return out.clamp_(min=0.0).add_(KERNEL_FLOOR)


def _graph_kernel_weights(graph: Graph, kernel: str, gamma: float, directed: bool) -> torch.Tensor:
    return kernel_weights(graph.x, graph.edge_index if directed else graph.undirected_edges, kernel, gamma)


def successive_sample(weights: torch.Tensor | None, k: int, generator: torch.Generator | None = None,
                      candidates: torch.Tensor | None = None, num_items: int | None = None,
                      ) -> torch.Tensor:
    """Draw ``k`` items without replacement, one at a time with probability ∝ weight.

    Implemented as Gumbel top-k: ``key = log w + Gumbel`` (``w`` uniform if
    ``weights`` is ``None``), keep the ``k`` largest keys among ``candidates``.

    Args:
        weights (Tensor, optional): ``(E,)`` positive weights, or ``None`` for uniform.
        k (int): how many to keep (``<= candidates.sum()``).
        generator (torch.Generator, optional): the random source. (default: :obj:`None`)
        candidates (Tensor, optional): ``(E,)`` bool, the items allowed.
            (default: :obj:`None`: all)
        num_items (int, optional): ``E`` when both ``weights`` and ``candidates`` are
            ``None``. (default: :obj:`None`)

    Returns:
        Tensor: ``(E,)`` bool mask with exactly ``k`` True entries.

    Raises:
        SamplerError: ``k`` is more than the candidates.

    Example:
        >>> mask = successive_sample(torch.tensor([1.0, 1.0, 0.0001, 1.0]), 2,
        ...                          torch.Generator().manual_seed(0))
        >>> mask.shape, int(mask.sum())
        (torch.Size([4]), 2)
    """
    ref = weights if weights is not None else candidates
    n = ref.numel() if ref is not None else int(num_items)
    device = draw_device(generator, weights, candidates)
    keys = _gumbel_keys((n,), weights, generator, device)
    if candidates is not None:
        if k > int(candidates.sum()):
            raise SamplerError(f"cannot keep {k} of {int(candidates.sum())} candidate edges")
        keys = keys.masked_fill(~candidates, -math.inf)
    mask = torch.zeros(n, dtype=torch.bool, device=device)
    if k > 0:
        mask[torch.topk(keys, k, sorted=False).indices] = True
    return mask


def draw_device(generator: torch.Generator | None, *tensors: torch.Tensor | None) -> torch.device:
    """The device a sampler's random draws happen on: the ``generator``'s.

    A CUDA generator draws only CUDA numbers (and a CPU one CPU numbers), so the keys are
    made where the generator lives — also when no tensor says where (uniform weights,
    only a count of items). Without a generator: the first tensor's device, else the CPU.

    Args:
        generator (torch.Generator, optional): the random source, or ``None``.
        *tensors (Tensor, optional): the tensors the draw reads (``None`` entries skipped).

    Returns:
        torch.device: where the keys are drawn.

    Raises:
        SamplerError: a given tensor lives on another device than the generator.
    """
    present = [t for t in tensors if t is not None]
    if generator is not None:
        device = generator.device
    else:
        device = present[0].device if present else torch.device("cpu")
    for t in present:
        if not _same_device(t.device, device):
            raise SamplerError(f"the random generator is on {device} but the edges/weights are on "
                               f"{t.device}: create it there, torch.Generator(device={str(t.device)!r})")
    return device


def _same_device(a: torch.device, b: torch.device) -> bool:
    return a.type == b.type and (a.index is None or b.index is None or a.index == b.index)


def _gumbel_keys(shape: tuple[int, ...], weights: torch.Tensor | None,
                 generator: torch.Generator | None, device: torch.device) -> torch.Tensor:
    u = torch.rand(shape, generator=generator, device=device, dtype=torch.float64)
    # -log(-log U) is Gumbel(0, 1); U is clamped off 0 so that no key is inf
    keys = -torch.log(-torch.log(u.clamp_min(1e-300)))
    if weights is not None:
        keys = keys + torch.log(weights.double())
    return keys


def independent_masks(weights: torch.Tensor | None, counts: torch.Tensor,
                      generator: torch.Generator | None = None, num_items: int | None = None,
                      ) -> torch.Tensor:
    """``(L, E)`` masks, row ``l`` an independent successive sample of ``counts[l]`` items.

    All rows in one pass: ``(L, E)`` keys, each row's ``counts[l]`` largest kept by one
    batched ``topk`` over a padded layout (:func:`~dropedge_core._segment_draws.smallest`;
    where that layout does not serve, under ``torch.compile``, the rows are ranked by one
    ``argsort``) — a fixed number of operators whatever ``L``: a selection per row,
    ``kthvalue``, would loop over the layers and read each cut back to Python.

    Args:
        weights (Tensor, optional): ``(E,)`` positive weights, or ``None`` for uniform.
        counts (Tensor): ``(L,)`` long, how many items each row keeps.
        generator (torch.Generator, optional): the random source. (default: :obj:`None`)
        num_items (int, optional): ``E`` when ``weights`` is ``None``. (default: :obj:`None`)

    Returns:
        Tensor: ``(L, E)`` bool, row ``l`` with ``counts[l]`` True entries.
    """
    n = weights.numel() if weights is not None else int(num_items)
    device = draw_device(generator, weights)
    counts = counts.to(device)
    if weights is None:  # Gumbel keys order as their uniforms do: the same masks without two logs
        keys = torch.rand((counts.numel(), n), generator=generator, device=device, dtype=torch.float64)
    else:
        keys = _gumbel_keys((counts.numel(), n), weights, generator, device)
    # the counts[l] largest keys of row l: the smallest of -keys (exact negation: the same order)
    padded = segment_draws.padded_layout(None, 1, n, counts.numel(), counts)
    if padded is not None:
        return segment_draws.smallest(keys.neg_(), counts.unsqueeze(1), padded)
    order = torch.argsort(keys, dim=1, descending=True)
    ranks = torch.empty_like(order)
    ranks.scatter_(1, order, torch.arange(n, device=device).expand_as(order))
    return ranks < counts.unsqueeze(1)


def nested_masks(weights: torch.Tensor | None, counts: torch.Tensor,
                 generator: torch.Generator | None = None, num_items: int | None = None,
                 increasing: bool = True) -> torch.Tensor:
    """``(L, E)`` nested masks (Algorithm 1 of the paper).

    ``increasing=True`` (LID, DropEdge++): the top layer draws ``counts[L-1]`` from all
    items, then each lower layer ``l`` draws ``counts[l]`` from the set of layer
    ``l + 1``, so ``mask[l] ⊆ mask[l+1]``. ``increasing=False`` (LDD): layer 0 draws
    first and each upper layer draws from the layer below, so ``mask[l] ⊇ mask[l+1]``.
    ``counts`` must be monotone in the drawing direction.

    With uniform weights every nested draw is a uniform subset, so one random ordering's
    prefixes give the same distribution in one pass. With kernel weights each layer
    redraws from the layer before with fresh keys: Algorithm 1 nests by redrawing,
    which is not the same as taking prefixes of one ordering.

    Args:
        weights (Tensor, optional): ``(E,)`` positive weights, or ``None`` for uniform.
        counts (Tensor): ``(L,)`` long, how many items each layer keeps.
        generator (torch.Generator, optional): the random source. (default: :obj:`None`)
        num_items (int, optional): ``E`` when ``weights`` is ``None``. (default: :obj:`None`)
        increasing (bool, optional): nest upwards (LID) rather than downwards (LDD).
            (default: :obj:`True`)

    Returns:
        Tensor: ``(L, E)`` bool, row ``l`` with ``counts[l]`` True entries.

    Example:
        >>> masks = nested_masks(torch.rand(6) + 0.1, torch.tensor([1, 3, 5]),
        ...                      torch.Generator().manual_seed(0))
        >>> masks.sum(1).tolist(), bool((masks[0] <= masks[1]).all() and (masks[1] <= masks[2]).all())
        ([1, 3, 5], True)
    """
    num_layers = counts.numel()
    n = weights.numel() if weights is not None else int(num_items)
    device = draw_device(generator, weights)
    counts = counts.to(device)
    if weights is None:
        keys = _gumbel_keys((n,), None, generator, device)
        rank = torch.empty(n, dtype=torch.long, device=device)
        rank[torch.argsort(keys, descending=True)] = torch.arange(n, device=device)
        return rank.unsqueeze(0) < counts.unsqueeze(1)
    # Fresh keys for every layer: successive sampling of k items is "the k smallest of
    # E_i / w_i" with E_i ~ Exp(1) (Efraimidis-Spirakis), so a layer's draw from the layer
    # before is the k smallest fresh keys among that pool.
    steps = list(range(num_layers - 1, -1, -1) if increasing else range(num_layers))
    never = num_layers if increasing else -1  # the "last layer" of an item never drawn
    last = nested_draws.last_layers(weights, steps, counts.tolist(), never, generator)
    return _reached(last, num_layers, increasing)


def _reached(last: torch.Tensor, num_layers: int, increasing: bool) -> torch.Tensor:
    """``(L, E)`` bool: item ``e`` is in layer ``l`` iff the nested draw reached ``l``:
    ``last[e] <= l`` (increasing draws go top-down, so ``last`` is its lowest layer), or
    ``l <= last[e]`` (decreasing). Where the walk ran in numpy
    (:data:`~dropedge_core._nested_draws.NUMPY_DRAW_DEVICES`: the CPU) the compare
    does too, on ``last``'s memory: torch's broadcast compare is ~9x slower there (Cora,
    L = 64: 155 vs 17 us)."""
    if last.device.type in nested_draws.NUMPY_DRAW_DEVICES:
        ends, layers = last.numpy()[None, :], np.arange(num_layers, dtype=last.numpy().dtype)[:, None]
        return torch.from_numpy(ends <= layers if increasing else layers <= ends)
    layers = torch.arange(num_layers, device=last.device).unsqueeze(1)
    return last.unsqueeze(0) <= layers if increasing else layers <= last.unsqueeze(0)


@dataclass
class EdgeSampler:
    """A point of the (layer relation × weighting) design.

    Args:
        relation (str, optional): one of :data:`RELATIONS`. (default: :obj:`"increasing"`)
        weighting (str, optional): ``"uniform"`` or ``"kernel"``. (default: :obj:`"kernel"`)
        p_min (float, optional): keep rate of the sparsest layer. (default: :obj:`0.3`)
        p_max (float, optional): keep rate of the densest layer. (default: :obj:`0.8`)
        p (float, optional): keep rate of the ``"shared"`` relation (DropEdge/FD).
            (default: :obj:`None`: ``(p_min + p_max) / 2``)
        kernel (str, optional): kernel of the ``"kernel"`` weighting (:data:`KERNELS`).
            (default: :obj:`"linear"`)
        gamma (float, optional): bandwidth of the ``rbf`` kernel. (default: :data:`RBF_GAMMA`)
        directed (bool, optional): sample the two directions of each edge separately (the
            authors' code); masks then have ``2M`` columns over ``graph.edge_index``.
            Otherwise both directions are kept or dropped together. (default: :obj:`False`)
        name (str, optional): display name. (default: the paper's name of the point, else
            ``"relation/weighting"``)

    Raises:
        SamplerError: an unknown relation, weighting or kernel, or a bad rate.

    Example:
        >>> from dropedge_core._synthetic import karate
        >>> sampler = EdgeSampler("increasing", "uniform", p_min=0.2, p_max=0.6)
        >>> masks = sampler.sample(karate(), 3, torch.Generator().manual_seed(0))
        >>> masks.shape, masks.sum(1).tolist()  # 78 edges: floor(78 * (0.2, 0.4, 0.6))
        (torch.Size([3, 78]), [15, 31, 46])
    """

    relation: str = "increasing"
    weighting: str = "kernel"
    p_min: float = 0.3
    p_max: float = 0.8
    p: float | None = None
    kernel: str = "linear"
    gamma: float = RBF_GAMMA
    directed: bool = False
    name: str = ""

    def __post_init__(self) -> None:
        if self.relation not in RELATIONS:
            raise SamplerError(f"unknown layer relation {self.relation!r}; valid: {', '.join(RELATIONS)}")
        if self.weighting not in WEIGHTINGS:
            raise SamplerError(f"unknown weighting {self.weighting!r}; valid: {', '.join(WEIGHTINGS)}")
        if self.kernel not in KERNELS:
            raise SamplerError(f"unknown kernel {self.kernel!r}; valid: {', '.join(KERNELS)}")
        check_rates(self.p_min, self.p_max)
        if self.p is None:
            self.p = (self.p_min + self.p_max) / 2
        check_rates(self.p, self.p, names=("p", "p"))
        if not self.name:
            self.name = next((k for k, v in NAMED.items() if v == (self.relation, self.weighting)),
                             f"{self.relation}/{self.weighting}")

    def num_items(self, graph: Graph) -> int:
        """Width of the masks: ``M``, or ``2M`` when ``directed``."""
        return graph.num_edges * (2 if self.directed else 1)

    def weights(self, graph: Graph) -> torch.Tensor | None:
        """Kernel weights per mask column (``None`` for uniform), memoised on the graph."""
        if self.weighting == "uniform":
            return None
        return graph.derived(_graph_kernel_weights, self.kernel, float(self.gamma), self.directed)

    def layer_counts(self, graph: Graph, num_layers: int) -> torch.Tensor:
        """Edges kept per layer (``(L,)``; row 0 the input layer)."""
        return self.counts_of(self.num_items(graph), num_layers)

    def counts_of(self, num_items: int | torch.Tensor, num_layers: int) -> torch.Tensor:
        """Items kept per layer out of ``num_items``: ``(L,)`` long, or ``(B, L)`` for a
        ``(B,)`` tensor of item counts (the graphs of a batch, each its own counts).

        Args:
            num_items (int or Tensor): the mask width (``M``, or ``2M`` if directed), or
                a ``(B,)`` long tensor of them.
            num_layers (int): the depth :math:`L`.

        Example:
            >>> make("ldd", p_min=0.2, p_max=0.6).counts_of(torch.tensor([100, 10]), 3)
            tensor([[60, 40, 20],
                    [ 6,  4,  2]])
        """
        check_layers(num_layers)
        m = num_items
        if self.relation == "all":
            if isinstance(m, torch.Tensor):
                return m.long().cpu().unsqueeze(-1).expand(*m.shape, num_layers).clone()
            return torch.full((num_layers,), m, dtype=torch.long)
        if self.relation == "shared":
            counts = keep_counts(m, 1, self.p, self.p)
            return counts.expand(*counts.shape[:-1], num_layers).clone()
        counts = keep_counts(m, num_layers, self.p_min, self.p_max)
        return counts.flip(-1) if self.relation == "decreasing" else counts

    def sample(self, graph: Graph, num_layers: int,
               generator: torch.Generator | None = None) -> torch.Tensor:
        """Masks of the edges kept at each layer, ``(L, M)`` bool (``(L, 2M)`` if directed).

        Row ``l`` is layer ``l``; row 0 is the input layer. Same generator state, same
        masks (on the same device).
        """
        counts = self.layer_counts(graph, num_layers)
        m = self.num_items(graph)
        device = graph.undirected_edges.device
        if generator is not None:  # every draw happens on the generator's device: the graph's
            draw_device(generator, graph.undirected_edges)
        counts = counts.to(device)
        w = self.weights(graph)
        if self.relation == "all":
            return torch.ones(num_layers, m, dtype=torch.bool, device=device)
        if self.relation == "shared":
            row = successive_sample(w, int(counts[0]), generator, num_items=m)
            return row.unsqueeze(0).expand(num_layers, m).clone()
        if self.relation == "independent":
            return independent_masks(w, counts, generator, num_items=m)
        return nested_masks(w, counts, generator, num_items=m,
                            increasing=self.relation == "increasing")


def make(name: str, **params) -> EdgeSampler:
    """The paper's named samplers: ``make("dropedge++", p_min=0.3, p_max=0.8)``.

    Args:
        name (str): one of :data:`NAMES` (case and surrounding blanks ignored).
        **params (optional): :class:`EdgeSampler` fields (``p_min``, ``p_max``, ``p``,
            ``kernel``, ``gamma``, ``directed``); a ``weighting`` or ``relation`` overrides
            the named default (``make("li", weighting="kernel")``).

    Returns:
        EdgeSampler: the sampler, named ``name`` unless a field moved it off the named point.

    Raises:
        SamplerError: an unknown name or parameter, or a bad value.

    Example:
        >>> sampler = make("dropedge++", p_min=0.3, p_max=0.8)
        >>> sampler.relation, sampler.weighting, sampler.name
        ('increasing', 'kernel', 'dropedge++')
        >>> make("li", weighting="kernel").name
        'independent/kernel'
    """
    key = str(name).strip().lower()
    if key not in NAMED:
        raise SamplerError(f"unknown sampler {name!r}; valid: {', '.join(NAMES)}")
    relation, weighting = NAMED[key]
    params.setdefault("relation", relation)
    params.setdefault("weighting", weighting)
    unknown = set(params) - set(EdgeSampler.__dataclass_fields__)
    if unknown:
        raise SamplerError(f"unknown sampler parameter(s) {sorted(unknown)}; valid: "
                           f"{', '.join(f for f in EdgeSampler.__dataclass_fields__ if f != 'name')}")
    return EdgeSampler(name=key if (params["relation"], params["weighting"]) == NAMED[key] else "",
                       **params)
