"""Independent references the tests compare with: dense normalisation formulas and
brute-force sampler marginals."""
from __future__ import annotations

import itertools

import torch


def dense_reference(a: torch.Tensor, method: str) -> torch.Tensor:
    n = a.size(0)
    eye = torch.eye(n)

    def inv_sqrt(d):
        return torch.where(d > 0, d.rsqrt(), torch.zeros_like(d))

    d = a.sum(1)
    dt = (a + eye).sum(1)
    na = inv_sqrt(d)[:, None] * a * inv_sqrt(d)[None, :]
    an = inv_sqrt(dt)[:, None] * (a + eye) * inv_sqrt(dt)[None, :]
    return {
        "NA": na,
        "FOG": eye + na,
        "AN": an,
        "ANS": eye + an,
        "ARW": (a + eye) / dt[:, None],
    }[method]


WEIGHTS = torch.tensor([1.0, 2.0, 3.0, 4.0, 10.0], dtype=torch.float64)


def successive_subset_probs(weights: list[float], k: int, pool: tuple[int, ...]) -> dict:
    """P(subset) of successive sampling of k items from ``pool``, by enumerating orders."""
    probs: dict = {}
    for order in itertools.permutations(pool, k):
        p, left = 1.0, sum(weights[i] for i in pool)
        for i in order:
            p *= weights[i] / left
            left -= weights[i]
        key = frozenset(order)
        probs[key] = probs.get(key, 0.0) + p
    return probs


def nested_marginals(weights: list[float], counts: list[int]) -> list[list[float]]:
    """Inclusion probability per (layer, item) of LID-style nested successive draws."""
    n, num_layers = len(weights), len(counts)
    marg = [[0.0] * n for _ in range(num_layers)]

    def walk(layer: int, pool: tuple[int, ...], p: float) -> None:
        if layer < 0:
            return
        for subset, q in successive_subset_probs(weights, counts[layer], pool).items():
            for i in subset:
                marg[layer][i] += p * q
            walk(layer - 1, tuple(sorted(subset)), p * q)

    walk(num_layers - 1, tuple(range(n)), 1.0)
    return marg
