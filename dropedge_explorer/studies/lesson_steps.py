"""The lesson's numbers, and the sentences built from them (one per step).

Each step of the lesson asks one question and answers it with a number measured on the
graph the class looks at: :func:`step_numbers` computes the step's numbers (plain lists and
floats, so that a test can recompute them with numpy and swap two samplers' series), and
:func:`step_sentence` writes the answer from those numbers only — nothing in a sentence is
typed by hand, so a sentence cannot say the opposite of the number beside it.

The quantities are the ones the theory speaks of:

- repeated propagation ``H ← Â H`` converges to the over-smoothing subspace ``M``: the
  relative distance ``d_M`` and the Dirichlet energy fall geometrically (a constant factor
  per step);
- dropping edges slows that convergence: the **ε-smoothing step**, the first step at which
  ``d_M`` falls below :data:`EPSILON`, comes later (or not within the steps shown);
- dropped edges keep the vectors away from ``M``; whether they also keep the *classes*
  further apart is a different number (the class separation), said separately, both ways;
- LID keeps the bottom layers sparse, so the product of the first layers' adjacencies
  connects fewer node pairs (a lower MEN) than LDD with the same edges in total;
- FD keeps a larger share of the edges between nodes of one class.

The last steps (a trained deep GCN, and the bundled depth verdicts) are in
:mod:`dropedge_explorer.studies.lesson_climax`.
"""
from __future__ import annotations

import pandas as pd
import torch
from dropedge_core import metrics, normalization
from dropedge_core.graph import Graph

from dropedge_explorer.studies import sampling, teaching

__all__ = ["EPSILON", "GRAPH_STEPS", "smoothing_step", "step_numbers", "step_sentence"]

#: ``d_M`` below this counts as smoothed (the ε of the ε-smoothing step).
EPSILON = 0.1
#: Draws of LID and LDD averaged for MEN.
MEN_DRAWS = 5
#: The steps computed on the lesson's graph (the others read bundled runs).
GRAPH_STEPS: tuple[str, ...] = ("propagation", "depth", "dropping", "lid_ldd", "fd")
#: Two numbers closer than this are "the same" in a sentence (separations, shares).
TIE = 0.005


def smoothing_step(distances: list[float], eps: float = EPSILON) -> int | None:
    """The ε-smoothing step: the first step ``l`` with ``distances[l] < eps``, ``None`` if none.

    Args:
        distances (list[float]): ``d_M(H_l)`` for ``l = 0 .. L``.
        eps (float, optional): the threshold. (default: :data:`EPSILON`)

    Example:
        >>> smoothing_step([0.9, 0.3, 0.08, 0.02]), smoothing_step([0.9, 0.5], 0.1)
        (2, None)
    """
    return next((k for k, d in enumerate(distances) if d < eps), None)


def _propagate(graph: Graph, masks_by: dict[str, torch.Tensor], seed: int) -> tuple[dict[str, dict], object]:
    snaps = teaching.propagation_snapshots(graph, masks_by, seed=seed)
    x = teaching.propagated_features(graph, seed=seed)
    out = {}
    for item, masks in zip(snaps.items, masks_by.values()):
        energies, h = [metrics.dirichlet_energy(x, graph.undirected_edges)], x
        for ei, ew in normalization.adjacencies(graph, masks.cpu(), "AN"):  # a loop over steps
            h = normalization.propagate(normalization.to_sparse(ei, ew, graph.num_nodes), h)
            energies.append(metrics.dirichlet_energy(h, graph.undirected_edges))
        out[item.sampler] = {"subspace": [float(v) for v in item.subspace],
                             "separation": [float(v) for v in item.separation],
                             "energy": [e / energies[0] if energies[0] > 0 else 0.0 for e in energies]}
    return out, snaps


def step_numbers(key: str, graph: Graph, layers: int = 16, keep: float = 0.5, p_min: float = 0.2,
                 p_max: float = 0.9, kernel: str = "linear", seed: int = 0) -> dict:
    """The numbers that answer step ``key``'s question on ``graph`` (one of :data:`GRAPH_STEPS`).

    Args:
        key (str): the step.
        graph (Graph): the lesson's graph.
        layers (int, optional): propagation steps (or layers sampled). (default: :obj:`16`)
        keep (float, optional): DropEdge's and FD's keep rate. (default: :obj:`0.5`)
        p_min (float, optional): LID's and LDD's bottom keep rate. (default: :obj:`0.2`)
        p_max (float, optional): their top keep rate. (default: :obj:`0.9`)
        kernel (str, optional): FD's kernel. (default: :obj:`"linear"`)
        seed (int, optional): the seed of the draws and of the feature projection. (default: :obj:`0`)

    Returns:
        ``{"step": key, "layers": L, ...}`` with, per sampler, lists over steps
        (``series[sampler]["subspace" | "separation" | "energy"]``, step 0 = ``X``, and the
        :class:`~dropedge_explorer.studies.teaching.Snapshots` they were read from, ``snaps``),
        MEN per draw (``men[sampler]``, and the draws, ``runs``), or kept shares
        (``shares[sampler]["intra" | "inter"]``, and the per-layer ``table``).
    """
    if key not in GRAPH_STEPS:
        raise ValueError(f"step {key!r} is not computed on a graph; one of {', '.join(GRAPH_STEPS)}")
    out: dict = {"step": key, "layers": int(layers), "graph": graph.name, "seed": seed}
    if key in ("propagation", "depth", "dropping"):
        names = ("nodrop", "dropedge") if key == "dropping" else ("nodrop",)
        masks = sampling.masks_by_sampler(graph, names, layers, keep, keep, seed)
        series, snaps = _propagate(graph, masks, seed)
        out.update(series=series, snaps=snaps, keep=keep, eps=EPSILON)
    elif key == "lid_ldd":
        df = sampling.men_runs(graph, ("lid", "ldd"), (layers,), MEN_DRAWS, p_min, p_max, seed=seed)
        out.update(men={n: [float(v) for v in part["men"]] for n, part in df.groupby("sampler", sort=False)},
                   p_min=p_min, p_max=p_max, runs=df)
    else:
        masks = {n: sampling.sample_masks(graph, n, layers, keep, keep, seed, kernel=kernel)
                 for n in ("dropedge", "fd")}
        shares = sampling.intra_inter_by_sampler(graph, masks)
        out.update(keep=keep, kernel=kernel, table=shares, shares={
            n: {kind: float(part.loc[part["kind"] == kind, "kept"].sum()
                            / part.loc[part["kind"] == kind, "total"].sum()) for kind in ("intra", "inter")}
            for n, part in shares.groupby("sampler", sort=False)})
    return out


def _trend(values: list[float]) -> str:
    """How a separation series moves: up then down, only down, only up, or flat."""
    first, last, peak = values[0], values[-1], max(values)
    at = values.index(peak)
    if peak > first + TIE and last < peak - TIE and 0 < at < len(values) - 1:
        return (f"rises from {first:.2f} (step 0) to {peak:.2f} at step {at}, then falls to {last:.2f} "
                f"at step {len(values) - 1}")
    word = "rises" if last > first + TIE else "falls" if last < first - TIE else "stays"
    return f"{word} from {first:.2f} (step 0) to {last:.2f} at step {len(values) - 1}"


def _propagation(n: dict) -> str:
    s = n["series"]["nodrop"]
    d, L = s["subspace"], n["layers"]
    return (f"After {L} averaging steps the vectors are at relative distance {d[-1]:.3f} from the "
            f"over-smoothing subspace ({d[0]:.2f} for X itself): repeated averaging pulls them onto it. "
            f"The class separation {_trend(s['separation'])}.")


def _rate(values: list[float]) -> tuple[float, int]:
    """The mean factor per step over the second half of ``values`` (geometric mean), and its start."""
    start = len(values) // 2
    a, b = values[start], values[-1]
    if a <= 0 or b <= 0 or len(values) - 1 == start:
        return 0.0, start
    return (b / a) ** (1 / (len(values) - 1 - start)), start


def _depth(n: dict) -> str:
    s = n["series"]["nodrop"]
    d, L = s["subspace"], n["layers"]
    rate, start = _rate(d)
    erate, _ = _rate(s["energy"])
    ratios = [b / a for a, b in zip(d[start:-1], d[start + 1:]) if a > 0]
    spread = (f" (every single step between {min(ratios):.3f} and {max(ratios):.3f})" if ratios else "")
    shape = "a geometric fall" if rate < 1 else "no fall"
    return (f"The distance falls from {d[0]:.3g} to {d[-1]:.3g} in {L} steps; from step {start} on each "
            f"step multiplies it by {rate:.3f} on average{spread}, and the Dirichlet energy by {erate:.3f}: "
            f"{shape}, a straight line on the log axis.")


def _when(step: int | None, layers: int) -> str:
    return f"at step {step}" if step is not None else f"not within {layers} steps"


def _dropping(n: dict) -> str:
    L, eps, keep = n["layers"], n["eps"], n["keep"]
    full, drop = n["series"]["nodrop"], n["series"]["dropedge"]
    a, b = smoothing_step(full["subspace"], eps), smoothing_step(drop["subspace"], eps)
    if a is not None and (b is None or b > a):
        verdict = "dropping edges delays it" + (f" by {b - a} steps" if b is not None else "")
    elif a is None and b is None:
        verdict = f"neither comes within ε in {L} steps (more steps show when)"
    elif b == a:
        verdict = "dropping edges does not change it here"
    else:
        verdict = "here dropping edges does not delay it"
    fs, ds = full["separation"], drop["separation"]
    higher = sum(y > x + TIE for x, y in zip(fs[1:], ds[1:]))
    lower = sum(y < x - TIE for x, y in zip(fs[1:], ds[1:]))
    pf, pd_ = max(fs), max(ds)
    best = (f"DropEdge's best class separation is {pd_:.2f} (step {ds.index(pd_)}) against {pf:.2f} (step "
            f"{fs.index(pf)}) with all edges; it is lower under DropEdge at {lower} of the {L} steps, "
            f"higher at {higher} (step {L}: all edges {fs[-1]:.2f}, DropEdge {ds[-1]:.2f})")
    if pd_ < pf - TIE and higher <= lower:
        classes = ("Dropped edges keep the vectors away from the subspace; they do not keep the classes "
                   f"further apart: {best}.")
    elif pd_ < pf - TIE:
        classes = ("Dropped edges keep the vectors away from the subspace; the classes never get as far "
                   f"apart as with all edges at their best, though late in the averaging they stay apart "
                   f"longer: {best}.")
    else:
        classes = f"Here dropped edges also keep the classes further apart: {best}."
    return (f"The ε-smoothing step (the first step with distance below ε = {eps:g}): all edges "
            f"{_when(a, L)}, DropEdge (keep rate {keep:.2f}) {_when(b, L)} — {verdict}. After {L} steps "
            f"the distance is {full['subspace'][-1]:.3f} with all edges and {drop['subspace'][-1]:.3f} "
            f"with DropEdge. {classes}")


def _lid_ldd(n: dict) -> str:
    lid, ldd = (sum(n["men"][s]) / len(n["men"][s]) for s in ("lid", "ldd"))
    lower = sum(a < b for a, b in zip(n["men"]["lid"], n["men"]["ldd"]))
    word = "fewer" if lid < ldd else "more" if lid > ldd else "as many"
    return (f"MEN (node pairs connected by the first layers' product, averaged over the {n['layers']} "
            f"layers; mean of {len(n['men']['lid'])} draws): LID {lid:,.0f}, LDD {ldd:,.0f} — LID connects "
            f"{word} pairs ({lid / ldd:.0%} of LDD's), lower in {lower} of the {len(n['men']['lid'])} draws.")


def _fd(n: dict) -> str:
    fd, de = n["shares"]["fd"], n["shares"]["dropedge"]
    gap, base = fd["intra"] - fd["inter"], de["intra"] - de["inter"]
    word = "prefers same-class edges" if gap > base + TIE else "does not prefer same-class edges here"
    return (f"FD keeps {fd['intra']:.0%} of the same-class edges and {fd['inter']:.0%} of the "
            f"different-class ones; DropEdge {de['intra']:.0%} and {de['inter']:.0%}: FD {word} "
            f"(a gap of {100 * gap:+.0f} points against DropEdge's {100 * base:+.0f}).")


_SENTENCES = {"propagation": _propagation, "depth": _depth, "dropping": _dropping, "lid_ldd": _lid_ldd,
              "fd": _fd}


def step_sentence(numbers: dict) -> str:
    """The answer of a step, written from :func:`step_numbers`'s ``numbers`` only.

    Args:
        numbers (dict): :func:`step_numbers` (or the same with two samplers' series swapped).
    """
    return _SENTENCES[numbers["step"]](numbers)


def numbers_table(numbers: dict) -> pd.DataFrame:
    """The series of a propagation step as a table (``sampler, step, subspace, separation, energy``)."""
    rows = [{"sampler": s, "step": k, "subspace": v["subspace"][k], "separation": v["separation"][k],
             "energy": v["energy"][k]} for s, v in numbers.get("series", {}).items()
            for k in range(len(v["subspace"]))]
    return pd.DataFrame(rows, columns=["sampler", "step", "subspace", "separation", "energy"])
