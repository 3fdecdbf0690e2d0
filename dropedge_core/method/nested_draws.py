"""The sequential part of the nested weighted samplers (Algorithm 1: DropEdge++, weighted
LDD): which layers each item reaches when every layer redraws from the layer before.

:func:`last_layers` walks the layers in drawing order (``steps``); each keeps the
``counts[layer]`` smallest fresh exponential keys ``E / w`` of the previous layer's pool
(Efraimidis-Spirakis: the k smallest keys are a successive sample of k). It returns, per
item, the last layer whose pool holds it (``never`` for an item never drawn);
:func:`~dropedge_core.method.samplers.nested_masks` turns that into the ``(L, E)`` masks
with one compare. Redrawing layer after layer is sequential in the layers (each pool
depends on the one before), so the walk is a loop over layers wherever it runs; what
differs is where:

* **the CPU** (:data:`NUMPY_DRAW_DEVICES`): :func:`_last_layers_numpy`, numpy keys and
  ``torch.topk`` heap selection (fastest there);
* **an accelerator, pools under** :data:`HOST_DRAW_BELOW` **items** (Cora, CiteSeer):
  the same walk on the host with numpy selection (:func:`_last_layers_host`): a fixed
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

__all__ = ["SELECT_SAMPLE_ABOVE", "SELECT_SAMPLE", "NUMPY_DRAW_DEVICES", "HOST_DRAW_BELOW", "last_layers"]

SELECT_SAMPLE_ABOVE = 200_000  # pools of at least this many keys select by sampled brackets
SELECT_SAMPLE = 8192  # the size of that sample
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
    items each keeps; the paths are in the module docstring."""
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
    with numpy's selection only (no torch operation per layer), the result moved back in
    one copy."""
    last = _last_layers_numpy(weights, steps, counts, never, generator, numpy_select=True)
    return last.to(weights.device)


def _last_layers_numpy(weights: torch.Tensor, steps: list[int], counts: list[int], never: int,
                       generator: torch.Generator | None, numpy_select: bool = False) -> torch.Tensor:
    """The walk on the host. Layer by layer in drawing order (``steps``), keep the
    ``counts[layer]`` smallest of fresh keys ``E / w`` over the previous layer's pool.
    Returns ``(E,)`` (int16 below 2**15 layers), on the CPU.

    Keys are drawn only for the pools (about half of ``L * E`` for LID), from one numpy
    generator seeded from ``generator`` (numpy's exponentials are ~5x faster than
    torch's), layer after layer into buffers reused across layers (a fresh 400 MB array per
    epoch on a 1M-node graph cost more in page faults than in arithmetic). Each layer
    selects its ``k`` smallest keys with :func:`_keep_smallest` (64 layers on Cora: ~1.5
    ms); ``numpy_select`` keeps that selection in numpy (:func:`_last_layers_host`)."""
    rng, inverse = _host_inputs(weights, generator)
    n = inverse.size
    last = np.full(n, never, dtype=np.int16 if len(steps) < 2**15 else np.int64)  # memory
    keys = np.empty(n, dtype=np.float32)
    if n < SELECT_SAMPLE_ABOVE:  # small: all keys in one call (per-call costs dominate)
        sizes = [n] + [counts[layer] for layer in steps[:-1]]
        exponentials, offset = rng.standard_exponential(sum(sizes), dtype=np.float32), 0
    else:  # large: layer by layer into one buffer (the same numbers: one stream)
        exponentials, offset = np.empty(n, dtype=np.float32), None
    pool, previous = np.arange(n), never
    for layer in steps:  # a loop over layers: each draw is from the previous one's set
        k, size = counts[layer], pool.size
        if k < size:  # take(): numpy's fancy indexing costs more per call
            if offset is None:
                draw = rng.standard_exponential(out=exponentials[:size], dtype=np.float32)
            else:
                draw, offset = exponentials[offset:offset + size], offset + size
            np.take(inverse, pool, out=keys[:size], mode="clip")  # "raise" would buffer `out`
            np.multiply(draw, keys[:size], out=keys[:size])
            keep = _keep_smallest(keys[:size], k, numpy_select)
            last[pool[~keep]] = previous  # dropped here: their last layer was the previous one
            pool = pool[keep]
        previous = layer
    last[pool] = previous
    return torch.from_numpy(last)


def _keep_smallest(keys: np.ndarray, k: int, numpy_select: bool = False) -> np.ndarray:
    """``(n,)`` bool mask of the ``k`` smallest ``keys`` (``0 <= k < n``), the pool's order
    kept: :func:`_smallest` (``torch.topk`` heap selection on small pools: 9 us vs 33 us for
    ``argpartition`` on 3400 keys), or numpy's ``argpartition`` when ``numpy_select``."""
    if not numpy_select:
        return _smallest(keys, k)
    keep = np.zeros(keys.size, dtype=bool)
    keep[np.argpartition(keys, k)[:k]] = True
    return keep


def _smallest(keys, k: int):
    """``(n,)`` bool numpy mask of the ``k`` smallest of ``keys`` (a float numpy array).

    Small pools: ``torch.topk`` of the smaller side (heap selection, fastest for a few
    items). Large pools (Floyd-Rivest): the keys are i.i.d., so a strided sample's order
    statistics bracket the k-th smallest key; every key below the bracket is kept, and
    only the few keys inside it are ranked exactly. Two compares over the pool instead
    of a selection over it (~8x faster at a million keys); the kept set is the same.
    """
    n = keys.size
    if n >= SELECT_SAMPLE_ABOVE and 0 < k < n:
        sample = np.sort(keys[::n // SELECT_SAMPLE])
        s, q = sample.size, k / n
        margin = 6.0 * math.sqrt(s * q * (1.0 - q)) + 8.0  # a miss is ~1e-8 likely; then the exact path
        lo_rank, hi_rank = int(q * s - margin), int(q * s + margin)
        lo = sample[lo_rank] if lo_rank >= 0 else -np.inf
        hi = sample[hi_rank] if hi_rank < s else np.inf
        keep = keys < lo
        middle = np.flatnonzero((keys >= lo) & (keys <= hi))
        need = k - int(np.count_nonzero(keep))
        if need == middle.size:  # (0 <= need, else the exact path below)
            keep[middle] = True
            return keep
        if 0 <= need < middle.size:
            inside = keys[middle]
            order = np.argpartition(inside, (need - 1, need)) if need else None
            # a tie across the k-th place: let the exact path below break it, so that a seed
            # gives the same masks whichever way the selection went
            if not need or inside[order[need - 1]] != inside[order[need]]:
                if need:
                    keep[middle[order[:need]]] = True
                return keep
    torch_keys = torch.from_numpy(keys)
    if n - k <= k:  # drop the n - k largest keys
        keep = np.ones(n, dtype=bool)
        keep[torch.topk(torch_keys, n - k, sorted=False).indices.numpy()] = False
    else:  # keep the k smallest
        keep = np.zeros(n, dtype=bool)
        keep[torch.topk(torch_keys, k, largest=False, sorted=False).indices.numpy()] = True
    return keep


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
