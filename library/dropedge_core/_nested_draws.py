"""The sequential part of the nested weighted samplers (Algorithm 1: DropEdge++, weighted
LDD): which layers each item reaches when every layer redraws from the layer before.

:func:`last_layers` walks the layers in drawing order (``steps``); each keeps the
``counts[layer]`` smallest fresh exponential keys ``E / w`` of the previous layer's pool
(Efraimidis-Spirakis: the k smallest keys are a successive sample of k). It returns, per
item, the last layer whose pool holds it (``never`` for an item never drawn);
:func:`~dropedge_core.samplers.nested_masks` turns that into the ``(L, E)`` masks
with one compare. Redrawing layer after layer is sequential in the layers (each pool
depends on the one before), so the walk is a loop over layers wherever it runs; what
differs is where:

* **the CPU** (:data:`NUMPY_DRAW_DEVICES`): :func:`_last_layers_numpy`, numpy keys and
  selection (fastest there);
* **an accelerator, pools under** :data:`HOST_DRAW_BELOW` **items** (Cora, CiteSeer):
  the same walk on the host (:func:`_last_layers_host`): a fixed
  number of device operations whatever ``L`` (a seed drawn from the device's generator,
  the weights down, the last layers up), instead of a few kernel launches per layer that
  cost more than the work on such small pools;
* **an accelerator, larger pools**: :func:`_last_layers_torch`, a ``topk`` per layer on
  the device (each layer's work there outweighs its launches; no host round trips).
"""
from __future__ import annotations

import math

import numpy as np
import torch

SELECT_SAMPLE_ABOVE = 200_000  # pools of at least this many keys may bracket by a sample
SELECT_SAMPLE = 8192  # the size of that sample
#: The next layer's floor is this fraction of a layer's cut (its smallest dropped key): low
#: enough that on Cora at L = 64 fewer than 1% of layers find too few keys above it, high
#: enough that ~2.6x the dropped keys are ranked (0.7: 3.1x, 0.9: 12% too few).
CUT_SLACK = 0.8
#: The pool's arrays are compacted when the dropped items are more than this fraction.
COMPACT_ABOVE = 0.125
#: Device types whose nested weighted draws take the numpy path (:func:`_last_layers_numpy`);
#: the others take :func:`_last_layers_host` or :func:`_last_layers_torch`. Tests empty it
#: to run the accelerators' paths on the CPU.
NUMPY_DRAW_DEVICES: set[str] = {"cpu"}
#: On an accelerator, nested draws over fewer items than this run on the host. An estimate,
#: not a GPU measurement: a layer on the device costs ~6 launches (~60-90 us) whatever the
#: pool, on the host ~30 us plus ~5 ns per item (this project's CPU), so they cross near 10k.
HOST_DRAW_BELOW = 20_000


def last_layers(weights: torch.Tensor, steps: list[int], counts: list[int], never: int,
                generator: torch.Generator | None) -> torch.Tensor:
    """``(E,)``: the last layer whose pool holds each item (``never``: never drawn), on the
    device of ``weights``. ``steps`` are the layers in drawing order, ``counts[layer]`` the
    items each keeps; the paths are in the module docstring.

    Args:
        weights (Tensor): ``(E,)`` positive weights.
        steps (list[int]): the layers in drawing order.
        counts (list[int]): ``counts[layer]``, the items each layer keeps.
        never (int): the value of an item never drawn.
        generator (torch.Generator, optional): the random source.

    Returns:
        Tensor: ``(E,)`` integer (int16 below 2**15 layers on the CPU path).
    """
    if weights.device.type in NUMPY_DRAW_DEVICES:
        return _last_layers_numpy(weights, steps, counts, never, generator)
    if weights.numel() < HOST_DRAW_BELOW:
        return _last_layers_host(weights, steps, counts, never, generator)
    return _last_layers_torch(weights, steps, counts, never, generator)


def _host_inputs(weights: torch.Tensor, generator: torch.Generator | None) -> tuple:
    """A numpy generator seeded from ``generator`` (the same generator state gives the same
    draw) and the inverse weights on the host, float32."""
    seed = torch.randint(0, 2**62, (1,), generator=generator, device=weights.device)
    # = (1.0 / w).float() with one temporary less (copy=True: never the caller's weights)
    inverse = weights.to(torch.float64, copy=True).reciprocal_().float().cpu().numpy()
    return np.random.default_rng(int(seed)), inverse


def _last_layers_host(weights: torch.Tensor, steps: list[int], counts: list[int], never: int,
                      generator: torch.Generator | None) -> torch.Tensor:
    """:func:`_last_layers_numpy` for a small pool on an accelerator: the walk on the host
    (numpy only, no torch operation per layer), the result moved back in one copy."""
    return _last_layers_numpy(weights, steps, counts, never, generator).to(weights.device)


def _last_layers_numpy(weights: torch.Tensor, steps: list[int], counts: list[int], never: int,
                       generator: torch.Generator | None) -> torch.Tensor:
    """The walk on the host. Layer by layer in drawing order (``steps``), drop the
    ``size - counts[layer]`` largest of fresh keys ``E / w`` over the previous layer's pool
    (= keep the ``counts[layer]`` smallest). Returns ``(E,)`` (int16 below 2**15 layers),
    on the CPU.

    Keys are drawn only for the pools, from one numpy generator seeded from ``generator``
    (numpy's exponentials are ~5x faster than torch's), into buffers reused across layers
    (a fresh 400 MB array per epoch on a 1M-node graph cost more in page faults than in
    arithmetic). What made this loop cost ~45 us a layer on Cora was per-layer
    bookkeeping, not arithmetic, so:

    * the pool is compacted lazily (:class:`_Pool`): a dropped item stays in the arrays
      with its key forced below every live key until the dropped ones are an eighth of
      the arrays; no gather of the weights and no compaction in most layers;
    * a layer finds its largest keys among those above a floor (:func:`_largest`): the
      previous layer's cut, a little lower (the keys are fresh but their law barely
      changes), else an order statistic of a sample of the keys, else all keys. The drop
      is exact whatever the floor: a floor that leaves too few keys is not used.
    """
    rng, inverse = _host_inputs(weights, generator)
    n = inverse.size
    last = np.full(n, never, dtype=np.int16 if len(steps) < 2**15 else np.int64)  # memory
    pool = _Pool(inverse)
    exponentials, keys = np.empty(n, dtype=np.float32), np.empty(n, dtype=np.float32)
    previous, cut = never, 0.0
    for layer in steps:  # a loop over layers: each draw is from the previous one's set
        drop = pool.live - counts[layer]
        if drop > 0:
            size = pool.size
            rng.standard_exponential(out=exponentials[:size], dtype=np.float32)
            pool.keys(exponentials[:size], out=keys[:size])
            dropped, cut = _largest(keys[:size], drop, cut * CUT_SLACK)
            last[pool.drop(dropped)] = previous  # dropped here: their last layer was the previous one
        previous = layer
    last[pool.alive()] = previous
    return torch.from_numpy(last)


class _Pool:
    """The items still drawn (the previous layer's set), compacted lazily.

    ``ids[:size]`` are the items in the arrays and ``inverse[:size]`` their ``1 / w``;
    ``dead[:num_dead]`` are the positions dropped since the last compaction, whose keys
    :meth:`keys` sets to ``-1`` (every live key ``E / w`` is ``>= 0``): they are never
    dropped again and never counted. The arrays are compacted when the dead are more than
    :data:`COMPACT_ABOVE` of them."""

    def __init__(self, inverse: np.ndarray):
        n = inverse.size
        self.inverse = inverse  # a copy of our own (_host_inputs): compacted in place
        self.ids = np.arange(n, dtype=np.int32 if n < 2**31 else np.int64)
        self.dead = np.empty(n, dtype=self.ids.dtype)
        self.size, self.live, self.num_dead = n, n, 0

    def keys(self, exponentials: np.ndarray, out: np.ndarray) -> np.ndarray:
        """``(size,)`` keys ``E / w`` of the arrays' items, ``-1`` at the dead positions."""
        np.multiply(exponentials, self.inverse[:self.size], out=out)
        out[self.dead[:self.num_dead]] = -1.0
        return out

    def drop(self, positions: np.ndarray) -> np.ndarray:
        """Drop the live items at ``positions`` (of the arrays); returns their ids."""
        ids = self.ids[positions]
        self.dead[self.num_dead:self.num_dead + positions.size] = positions
        self.num_dead += positions.size
        self.live -= positions.size
        if self.num_dead > COMPACT_ABOVE * self.size:
            self._compact()
        return ids

    def alive(self) -> np.ndarray:
        """The ids of the live items."""
        keep = np.ones(self.size, dtype=bool)
        keep[self.dead[:self.num_dead]] = False
        return self.ids[:self.size][keep]

    def _compact(self) -> None:
        keep = np.ones(self.size, dtype=bool)
        keep[self.dead[:self.num_dead]] = False
        self.ids[:self.live] = self.ids[:self.size][keep]
        self.inverse[:self.live] = self.inverse[:self.size][keep]
        self.size, self.num_dead = self.live, 0


def _largest(keys: np.ndarray, drop: int, floor: float) -> tuple[np.ndarray, float]:
    """The positions of the ``drop`` largest ``keys`` (``0 < drop <= keys.size``) and the
    smallest of them (the cut).

    Exact selection (``argpartition``) among the keys at or above a floor: ``floor`` if it
    leaves at least ``drop`` keys (then every one of the ``drop`` largest is among them),
    else, on a pool of :data:`SELECT_SAMPLE_ABOVE` keys or more, a lower bracket of the
    ``drop``-th largest key from a strided sample's order statistics (Floyd-Rivest), else
    all keys. Which floor served changes the time, never the result (ties aside: the
    order ``argpartition`` leaves equal keys in is fixed for given keys, so a seed still
    gives the same masks)."""
    candidates = _at_least(keys, drop, floor)
    if candidates is None and keys.size >= SELECT_SAMPLE_ABOVE:
        candidates = _at_least(keys, drop, _sample_floor(keys, drop))
    if candidates is None:
        candidates = np.arange(keys.size)
    values = keys[candidates]
    if candidates.size > drop:
        top = np.argpartition(values, candidates.size - drop)[candidates.size - drop:]
        candidates, values = candidates[top], values[top]
    return candidates, float(values.min())


def _at_least(keys: np.ndarray, drop: int, floor: float) -> np.ndarray | None:
    """The positions of the keys ``>= floor`` if there are at least ``drop``, else ``None``
    (a floor ``<= 0`` is no floor: every live key is ``>= 0``)."""
    if not floor > 0:
        return None
    found = np.flatnonzero(keys >= floor)
    return found if found.size >= drop else None


def _sample_floor(keys: np.ndarray, drop: int) -> float:
    """A value most likely at or below the ``drop``-th largest key (``0.0``: none found): the
    order statistic of a strided sample of the keys six binomial standard deviations below
    that key's rank in the sample. A floor above it only costs time (:func:`_largest`
    checks the count and falls back to all keys)."""
    n = keys.size
    sample = np.sort(keys[::max(1, n // SELECT_SAMPLE)])
    s, q = sample.size, (n - drop) / n
    rank = int(q * s - 6.0 * math.sqrt(s * q * (1.0 - q)) - 8.0)
    return float(sample[rank]) if rank >= 0 else 0.0


def _last_layers_torch(weights: torch.Tensor, steps: list[int], counts: list[int], never: int,
                       generator: torch.Generator | None) -> torch.Tensor:
    """:func:`_last_layers_numpy` for tensors on an accelerator: all ``(L, E)`` keys in
    one call, then a ``topk`` per layer (no host round trips)."""
    num_layers, n = len(steps), weights.numel()
    keys = torch.rand((num_layers, n), generator=generator, device=weights.device)
    keys.clamp_min_(torch.finfo(torch.float32).tiny).log_().neg_().div_(weights.float())  # E / w
    last = torch.full((n,), never, dtype=torch.long, device=weights.device)
    pool = torch.arange(n, device=weights.device)
    for layer in steps:  # a loop over layers
        k = counts[layer]
        if k < pool.numel():
            pool = pool[torch.topk(keys[layer, pool], k, largest=False, sorted=False).indices]
        last[pool] = layer
    return last
