"""Issue 43: every lesson step's sentence holds against numbers computed independently.

The numbers are recomputed here with numpy from the graph itself (the normalised adjacency
built by hand, the propagation, the distance to the over-smoothing subspace, the class
separation, the Dirichlet energy, MEN as boolean matrix products, the kept shares), on karate
and csbm with two seeds; each sentence's claims are read back (its numbers and its words)
and checked against them. Swapping two samplers' series in the step's numbers must make the
check fail: a sentence that would still "hold" with the samplers swapped says nothing.
"""
from __future__ import annotations

import re

import numpy as np
import pytest
import torch
from dropedge_core import datasets

from dropedge_explorer.studies import lesson_steps, sampling
from dropedge_explorer.studies.sampling import make_sampler, run_seed

CASES = [(name, seed) for name in ("karate", "csbm") for seed in (0, 1)]
LAYERS = {"propagation": 16, "depth": 16, "dropping": 32, "lid_ldd": 8, "fd": 16}


@pytest.fixture(scope="module")
def graphs():
    return {name: datasets.load(name, split="per-class") for name in ("karate", "csbm")}


# ---- the independent numbers (numpy only) ------------------------------------------------

def _edges(graph) -> np.ndarray:
    return graph.undirected_edges.cpu().numpy()


def _a_hat(graph, kept: np.ndarray) -> np.ndarray:
    """D^-1/2 (A + I) D^-1/2 of the kept edges, dense."""
    n = graph.num_nodes
    u, v = _edges(graph)[:, kept]
    a = np.eye(n)
    a[u, v] = a[v, u] = 1.0
    d = a.sum(1)
    return a / np.sqrt(d)[:, None] / np.sqrt(d)[None, :]


def _components(graph) -> np.ndarray:
    n = graph.num_nodes
    parent = np.arange(n)

    def root(i):
        while parent[i] != i:
            i = parent[i]
        return i
    for a, b in _edges(graph).T:
        ra, rb = root(a), root(b)
        if ra != rb:
            parent[ra] = rb
    return np.array([root(i) for i in range(n)])


def _d_m(graph, h: np.ndarray) -> float:
    """||h - P_M h|| / ||h||, M spanned by sqrt(deg + 1) on each component of the full graph."""
    n = graph.num_nodes
    u, v = _edges(graph)
    deg = np.bincount(np.r_[u, v], minlength=n) + 1.0
    e = np.sqrt(deg)
    proj = np.zeros_like(h)
    comp = _components(graph)
    for c in np.unique(comp):
        idx = comp == c
        ec = e[idx]
        proj[idx] = np.outer(ec, ec @ h[idx]) / (ec @ ec)
    return float(np.linalg.norm(h - proj) / np.linalg.norm(h))


def _separation(h: np.ndarray, y: np.ndarray) -> float:
    hc = h - h.mean(0)
    total = (hc ** 2).sum()
    between = sum((y == c).sum() * (hc[y == c].mean(0) ** 2).sum() for c in np.unique(y))
    return float(between / total)


def _energy(graph, h: np.ndarray) -> float:
    n = graph.num_nodes
    u, v = _edges(graph)
    deg = np.bincount(np.r_[u, v], minlength=n) + 1.0
    s = h / np.sqrt(deg)[:, None]
    return float(((s[u] - s[v]) ** 2).sum() / n)


def _propagation(graph, masks: torch.Tensor) -> dict:
    x = graph.x.double().numpy()  # both graphs have at most 64 features: no projection
    y = graph.y.numpy()
    hs = [x]
    for kept in masks.numpy():
        hs.append(_a_hat(graph, kept) @ hs[-1])
    e0 = _energy(graph, x)
    return {"subspace": [_d_m(graph, h) for h in hs], "separation": [_separation(h, y) for h in hs],
            "energy": [_energy(graph, h) / e0 for h in hs]}


def _men(graph, masks: torch.Tensor) -> float:
    n = graph.num_nodes
    reach = np.eye(n, dtype=bool)
    counts = []
    for kept in masks.numpy():
        a = np.eye(n, dtype=bool)
        u, v = _edges(graph)[:, kept]
        a[u, v] = a[v, u] = True
        reach = (reach.astype(np.int64) @ a.astype(np.int64)) > 0
        counts.append(int(reach.sum()))
    return float(np.mean(counts))


def independent(key: str, graph, seed: int, keep: float = 0.5, p_min: float = 0.2,
                p_max: float = 0.9) -> dict:
    """The step's numbers, recomputed here (the masks are the step's input, drawn with the
    sampler and the seeds the step documents)."""
    L = LAYERS[key]
    if key in ("propagation", "depth", "dropping"):
        names = ("nodrop", "dropedge") if key == "dropping" else ("nodrop",)
        return {n: _propagation(graph, sampling.sample_masks(graph, n, L, keep, keep, seed)) for n in names}
    if key == "lid_ldd":
        out = {}
        for name in ("lid", "ldd"):
            s = make_sampler(name, p_min, p_max)
            out[name] = [_men(graph, s.sample(graph, L, generator=torch.Generator().manual_seed(
                run_seed(seed, name, L, run)))) for run in range(lesson_steps.MEN_DRAWS)]
        return out
    y = graph.y.numpy()
    u, v = _edges(graph)
    same = y[u] == y[v]
    out = {}
    for name in ("dropedge", "fd"):
        kept = sampling.sample_masks(graph, name, L, keep, keep, seed).numpy()
        out[name] = {"intra": kept[:, same].sum() / (same.sum() * L),
                     "inter": kept[:, ~same].sum() / ((~same).sum() * L)}
    return out


# ---- reading a sentence back -------------------------------------------------------------

def _num(pattern: str, text: str) -> list[float]:
    m = re.search(pattern, text)
    assert m, f"{pattern!r} not in: {text}"
    return [float(g.replace(",", "")) for g in m.groups()]


def _step_or_none(pattern: str, text: str) -> int | None:
    m = re.search(pattern, text)
    assert m, f"{pattern!r} not in: {text}"
    return None if m.group(1) is None else int(m.group(1))


def check(key: str, sentence: str, ind: dict, L: int) -> None:
    """Every claim of ``sentence`` against the independent numbers ``ind``."""
    if key == "propagation":
        s, d = ind["nodrop"]["separation"], ind["nodrop"]["subspace"]
        (dist,) = _num(r"relative distance ([\d.]+) from", sentence)
        assert dist == pytest.approx(d[-1], abs=6e-4)
        peak, at = max(s), int(np.argmax(s))
        if peak > s[0] + 0.005 and s[-1] < peak - 0.005 and 0 < at < L:
            a, b, k, c = _num(r"rises from ([\d.]+) \(step 0\) to ([\d.]+) at step (\d+), then falls to "
                              r"([\d.]+)", sentence)
            assert (a, b, int(k), c) == pytest.approx((s[0], peak, at, s[-1]), abs=6e-3)
        else:
            assert "then falls" not in sentence
    elif key == "depth":
        d, e = ind["nodrop"]["subspace"], ind["nodrop"]["energy"]
        h = L // 2
        r, lo, hi, er = _num(r"multiplies it by ([\d.]+) on average \(every single step between ([\d.]+) "
                             r"and ([\d.]+)\), and the Dirichlet energy by ([\d.]+)", sentence)
        ratios = np.array(d[h + 1:]) / np.array(d[h:-1])
        assert r == pytest.approx((d[-1] / d[h]) ** (1 / (L - h)), abs=6e-4)
        assert (lo, hi) == pytest.approx((ratios.min(), ratios.max()), abs=6e-4)
        assert er == pytest.approx((e[-1] / e[h]) ** (1 / (L - h)), abs=6e-4)
        assert ("a geometric fall" in sentence) == (r < 1)
    elif key == "dropping":
        full, drop = ind["nodrop"], ind["dropedge"]
        a = next((k for k, v in enumerate(full["subspace"]) if v < lesson_steps.EPSILON), None)
        b = next((k for k, v in enumerate(drop["subspace"]) if v < lesson_steps.EPSILON), None)
        assert _step_or_none(r"all edges (?:at step (\d+)|not within)", sentence) == a
        assert _step_or_none(r"DropEdge \(keep rate [\d.]+\) (?:at step (\d+)|not within)", sentence) == b
        if a is not None and (b is None or b > a):
            assert "dropping edges delays it" in sentence
        fs, ds = full["separation"], drop["separation"]
        higher = sum(y > x + 0.005 for x, y in zip(fs[1:], ds[1:]))
        lower = sum(y < x - 0.005 for x, y in zip(fs[1:], ds[1:]))
        pd_, kd, pf, kf = _num(r"best class separation is ([\d.]+) \(step (\d+)\) against ([\d.]+) \(step "
                               r"(\d+)\)", sentence)
        assert (pd_, pf) == pytest.approx((max(ds), max(fs)), abs=6e-3)
        assert (kd, kf) == (int(np.argmax(ds)), int(np.argmax(fs)))
        assert f"lower under DropEdge at {lower} of the {L} steps, higher at {higher}" in sentence
        if max(ds) < max(fs) - 0.005:
            assert "Dropped edges keep the vectors away from the subspace" in sentence
            assert ("they do not keep the classes further apart" in sentence) == (higher <= lower)
        else:
            assert "also keep the classes further apart" in sentence
    elif key == "lid_ldd":
        lid, ldd = _num(r"LID ([\d,]+), LDD ([\d,]+)", sentence)
        assert (lid, ldd) == pytest.approx((np.mean(ind["lid"]), np.mean(ind["ldd"])), abs=0.51)
        assert ("LID connects fewer" in sentence) == (np.mean(ind["lid"]) < np.mean(ind["ldd"]))
        lower = sum(a < b for a, b in zip(ind["lid"], ind["ldd"]))
        assert f"lower in {lower} of the" in sentence
    else:
        fi, fo, di, do = _num(r"FD keeps (\d+)% of the same-class edges and (\d+)% .*DropEdge (\d+)% "
                              r"and (\d+)%", sentence)
        fd, de = ind["fd"], ind["dropedge"]
        assert (fi, fo, di, do) == pytest.approx((100 * fd["intra"], 100 * fd["inter"], 100 * de["intra"],
                                                   100 * de["inter"]), abs=0.51)
        prefers = fd["intra"] - fd["inter"] > de["intra"] - de["inter"] + 0.005
        assert ("FD prefers same-class edges" in sentence) == prefers


def _swap(numbers: dict, key: str, graph, seed: int) -> dict:
    """``numbers`` with two samplers' series exchanged (a one-sampler step takes DropEdge's)."""
    out = dict(numbers)
    if key in ("propagation", "depth"):
        other = lesson_steps.step_numbers("dropping", graph, layers=numbers["layers"], seed=seed)
        out["series"] = {"nodrop": other["series"]["dropedge"]}
    elif key == "dropping":
        s = numbers["series"]
        out["series"] = {"nodrop": s["dropedge"], "dropedge": s["nodrop"]}
    elif key == "lid_ldd":
        out["men"] = {"lid": numbers["men"]["ldd"], "ldd": numbers["men"]["lid"]}
    else:
        out["shares"] = {"dropedge": numbers["shares"]["fd"], "fd": numbers["shares"]["dropedge"]}
    return out


@pytest.mark.parametrize("key", lesson_steps.GRAPH_STEPS)
@pytest.mark.parametrize("name,seed", CASES)
def test_each_step_sentence_holds_against_numpy_and_fails_with_samplers_swapped(graphs, key, name, seed):
    graph, L = graphs[name], LAYERS[key]
    numbers = lesson_steps.step_numbers(key, graph, layers=L, seed=seed)
    ind = independent(key, graph, seed)
    check(key, lesson_steps.step_sentence(numbers), ind, L)
    with pytest.raises(AssertionError):
        check(key, lesson_steps.step_sentence(_swap(numbers, key, graph, seed)), ind, L)


def test_the_smoothing_step_is_the_first_step_below_epsilon():
    assert lesson_steps.smoothing_step([1.0, 0.5, 0.09, 0.2, 0.01]) == 2
    assert lesson_steps.smoothing_step([1.0, 0.5], eps=0.4) is None
