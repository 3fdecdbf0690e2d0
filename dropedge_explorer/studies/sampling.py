"""Small studies behind the app's figures: samples per sampler, nesting, intra/inter
shares, MEN over runs and depths, and the over-smoothing demo.

Each function takes a :class:`~dropedge_core.graph.Graph` and plain parameters and
returns tensors or a tidy :class:`pandas.DataFrame` (one row per observation), which
the builders in :mod:`dropedge_explorer.figures` turn into figures. Nothing here draws.

Seeds: every draw gets its own generator from :func:`run_seed` ``(seed, sampler,
layers, run, draw)``, so a row of a study does not depend on which other samplers or
depths were asked for in the same call.
"""
from __future__ import annotations

import hashlib
import math
from collections.abc import Callable, Iterable, Sequence

import numpy as np
import pandas as pd
import torch
from dropedge_core import metrics, normalization, samplers
from dropedge_core.graph import Graph

from dropedge_explorer import memory

__all__ = [
    "PAPER_MEN_SETTING", "MEN_DEPTHS", "EXACT_BY_DEFAULT_MAX_NODES", "MEN_RUNS_SOURCES", "run_seed",
    "make_sampler", "sample_masks", "masks_by_sampler", "keep_counts_by_sampler", "nesting_matrix",
    "intra_inter_by_sampler", "undirected_masks", "men_runs",
    "men_summary", "edge_number_stats", "men_comparison", "smoothing_curves",
    "smoothing_spread", "smoothing_at_last_step",
]

#: The paper's MEN setting (appendix "Mean-Edge-Number"): keep rates 0.05 -> 1.0 and
#: DropEdge at p = (p_min + p_max) / 2 = 0.525.
PAPER_MEN_SETTING: dict[str, float] = {"p_min": 0.05, "p_max": 1.0}
#: The depths the MEN explorer offers: the paper's (:data:`dropedge_explorer.studies.depth.DEPTHS`)
#: up to 32 (exact MEN of 64 layers over several samplers and runs is too slow for a page).
MEN_DEPTHS: tuple[int, ...] = (2, 4, 8, 16, 32)
#: The largest graph (nodes) on which :func:`men_runs` computes MEN exactly by default;
#: above it, an estimate from sampled source nodes (exact stays possible up to
#: :data:`dropedge_core.metrics.EXACT_ALLOWED_MAX_NODES`).
EXACT_BY_DEFAULT_MAX_NODES = 1000
#: Source nodes of each sample's MEN estimate in :func:`men_runs` above that size (and on
#: the MEN Explorer with "Exact MEN" off): a table estimates once per sampler, depth and
#: run, so it takes fewer than one sample's :data:`~dropedge_core.metrics.DEFAULT_SOURCES`.
MEN_RUNS_SOURCES = 256


def run_seed(seed: int, *parts: object) -> int:
    """A stable 32-bit seed for ``(seed, *parts)``: a hash of their text (not Python's
    ``hash``, which is salted per process).

    32 bits because torch's CPU generator (mt19937) only uses the low 32 bits of a
    seed: seeds that differ only above them give the same stream.

    Args:
        seed (int): the base seed.
        *parts (object): what the stream is for, e.g. ``(sampler, layers, run)``.

    Example:
        >>> run_seed(0, "lid", 8, 3) == run_seed(0, "lid", 8, 3)
        True
    """
    text = "|".join(str(p) for p in (seed, *parts)).encode()
    return int.from_bytes(hashlib.blake2b(text, digest_size=4).digest(), "little")


def make_sampler(name: str, p_min: float, p_max: float, kernel: str = "linear", p: float | None = None,
                 directed: bool = False) -> samplers.EdgeSampler:
    """The named sampler with the given keep rates (DropEdge/FD: ``p``, default ``(p_min + p_max) / 2``).

    Args:
        name (str): the sampler's name (:data:`dropedge_core.samplers.NAMES`).
        p_min (float): the keep rate :math:`p_{min}` of the layer-wise samplers.
        p_max (float): the keep rate :math:`p_{max}` of the layer-wise samplers.
        kernel (str, optional): the kernel of FD / DropEdge++. (default: :obj:`"linear"`)
        p (float, optional): the one keep rate of DropEdge / FD (``None``:
            ``(p_min + p_max) / 2``). (default: :obj:`None`)
        directed (bool, optional): sample each direction of an edge on its own.
            (default: :obj:`False`)
    """
    return samplers.make(name, p_min=p_min, p_max=p_max, p=p, kernel=kernel, directed=directed)


def sample_masks(graph: Graph, sampler: str, num_layers: int, p_min: float, p_max: float,
                 seed: int = 0, kernel: str = "linear", draw: int = 0) -> torch.Tensor:
    """One ``(L, M)`` bool sample of ``sampler`` on ``graph`` (row 0 = input layer).

    ``draw`` numbers successive resamples under the same ``seed``.

    Args:
        graph (Graph): the graph sampled.
        sampler (str): the sampler's name.
        num_layers (int): the depth :math:`L`.
        p_min (float): the keep rate :math:`p_{min}`.
        p_max (float): the keep rate :math:`p_{max}`.
        seed (int, optional): the seed of the sample. (default: :obj:`0`)
        kernel (str, optional): the kernel of FD / DropEdge++. (default: :obj:`"linear"`)
        draw (int, optional): the number of the resample under the same ``seed``.
            (default: :obj:`0`)

    Example:
        >>> from dropedge_core.datasets import karate
        >>> masks = sample_masks(karate(), "dropedge++", 3, p_min=0.3, p_max=0.8)
        >>> masks.shape, masks.sum(dim=1).tolist()  # 78 edges × 0.3, 0.55, 0.8
        (torch.Size([3, 78]), [23, 42, 62])
        >>> bool((masks[0] & ~masks[1]).any())  # nested: layer 0's edges are kept above
        False
    """
    s = make_sampler(sampler, p_min, p_max, kernel)
    gen = torch.Generator().manual_seed(run_seed(seed, sampler, num_layers, "draw", draw))
    return s.sample(graph, num_layers, generator=gen)


def masks_by_sampler(graph: Graph, names: Iterable[str], num_layers: int, p_min: float,
                     p_max: float, seed: int = 0, kernel: str = "linear", draw: int = 0,
                     ) -> dict[str, torch.Tensor]:
    """``{sampler: (L, M) masks}`` for each name, each from its own seeded generator.

    Args:
        graph (Graph): the graph sampled.
        names (Iterable[str]): the samplers' names.
        num_layers (int): the depth :math:`L`.
        p_min (float): the keep rate :math:`p_{min}`.
        p_max (float): the keep rate :math:`p_{max}`.
        seed (int, optional): the seed of the samples. (default: :obj:`0`)
        kernel (str, optional): the kernel of FD / DropEdge++. (default: :obj:`"linear"`)
        draw (int, optional): the number of the resample. (default: :obj:`0`)
    """
    return {n: sample_masks(graph, n, num_layers, p_min, p_max, seed, kernel, draw) for n in names}


def keep_counts_by_sampler(graph: Graph, names: Iterable[str], num_layers: int, p_min: float,
                           p_max: float) -> dict[str, torch.Tensor]:
    """``{sampler: (L,) edges kept per layer}``; the counts are fixed by the schedule
   , no sampling needed.

    Args:
        graph (Graph): the graph.
        names (Iterable[str]): the samplers' names.
        num_layers (int): the depth :math:`L`.
        p_min (float): the keep rate :math:`p_{min}`.
        p_max (float): the keep rate :math:`p_{max}`.

    Example:
        >>> from dropedge_core.datasets import karate
        >>> counts = keep_counts_by_sampler(karate(), ["dropedge", "dropedge++"], 3, 0.3, 0.8)
        >>> {name: c.tolist() for name, c in counts.items()}
        {'dropedge': [42, 42, 42], 'dropedge++': [23, 42, 62]}
    """
    return {n: make_sampler(n, p_min, p_max).layer_counts(graph, num_layers) for n in names}


def nesting_matrix(masks: torch.Tensor) -> torch.Tensor:
    """``(L, L)`` float: entry ``[i, j] = |mask[i] ∩ mask[j]| / |mask[i]|``, the share of
    layer ``i``'s kept edges that layer ``j`` keeps too.

    LID / DropEdge++ (``mask[i] ⊆ mask[j]`` for ``i < j``) give 1 on and above the
    diagonal; LDD gives 1 on and below it; LI gives about ``p_j`` off the diagonal. A
    layer that keeps no edge has a ``nan`` row.

    Args:
        masks (torch.Tensor): ``(L, M)`` bool masks.

    Example:
        >>> nesting_matrix(torch.tensor([[1, 0, 0], [1, 1, 0]], dtype=torch.bool))
        tensor([[1.0000, 1.0000],
                [0.5000, 1.0000]])
    """
    m = masks.double()
    inter = m @ m.T
    size = m.sum(1, keepdim=True)
    return (inter / size).where(size > 0, torch.full_like(inter, math.nan)).float()


def edge_classes(graph: Graph, edges: torch.Tensor | None = None) -> torch.Tensor:
    """``(E,)`` long per undirected edge: 1 intra-class, 0 inter-class, -1 when an end is
    unlabelled (``y < 0``)."""
    u, v = graph.undirected_edges if edges is None else edges
    yu, yv = graph.y[u], graph.y[v]
    out = (yu == yv).long()
    return out.masked_fill((yu < 0) | (yv < 0), -1)


def intra_inter_shares(graph: Graph, masks: torch.Tensor) -> pd.DataFrame:
    """Kept share of intra- and inter-class edges per layer.

    Args:
        graph: the graph (labels ``graph.y``; unlabelled ends are left out).
        masks: ``(L, M)`` bool (``(L, 2M)`` directed masks count an edge as kept when
            either direction is).

    Returns:
        One row per ``(layer, kind)``, ``kind`` in ``{"intra", "inter"}``, with columns
        ``layer, kind, kept, total, share`` (``share = kept / total``, ``nan`` if
        ``total = 0``). A feature-dependent sampler on a homophilous graph keeps a larger
        share of intra-class edges than a uniform one.
    """
    masks = undirected_masks(graph, masks)
    cls = edge_classes(graph)
    rows = []
    for kind, flag in (("intra", 1), ("inter", 0)):
        sel = cls == flag
        kept = masks[:, sel].sum(1)
        total = int(sel.sum())
        share = kept.double() / total if total else torch.full((masks.size(0),), math.nan)
        rows.append(pd.DataFrame({"layer": range(masks.size(0)), "kind": kind,
                                  "kept": kept.tolist(), "total": total, "share": share.tolist()}))
    return pd.concat(rows, ignore_index=True)


def intra_inter_by_sampler(graph: Graph, masks_by: dict[str, torch.Tensor]) -> pd.DataFrame:
    """:func:`intra_inter_shares` for several samplers, with a ``sampler`` column (the
    table of :func:`dropedge_explorer.figures.intra_inter_share`).

    Args:
        graph (Graph): the graph the masks index (its labels tell intra from inter edges).
        masks_by (dict[str, torch.Tensor]): ``{sampler: (L, M) masks}``
            (:func:`masks_by_sampler`).
    """
    frames = [intra_inter_shares(graph, m).assign(sampler=name) for name, m in masks_by.items()]
    return pd.concat(frames, ignore_index=True)


def undirected_masks(graph: Graph, masks: torch.Tensor) -> torch.Tensor:
    """Fold ``(L, 2M)`` directed masks to ``(L, M)`` (kept if either direction is kept).

    Args:
        graph (Graph): the graph the masks index.
        masks (torch.Tensor): ``(L, 2M)`` directed masks (``(L, M)`` ones are returned as
            they are).
    """
    m = graph.num_edges
    if masks.size(-1) == 2 * m:
        return masks[..., :m] | masks[..., m:]
    return masks


def men_runs(graph: Graph, sampler_names: Sequence[str], layers_list: Sequence[int], runs: int,
             p_min: float, p_max: float, seed: int = 0, kernel: str = "linear",
             num_sources: int | None = None, p: float | None = None, directed: bool = False,
             on_sample: Callable[[], None] | None = None) -> pd.DataFrame:
    """MEN and edge numbers over independent samples (paper appendix, "MEN" table and
    edge-number figure).

    Args:
        graph (Graph): the graph.
        sampler_names (Sequence[str]): sampler names
            (:data:`dropedge_core.samplers.NAMES`).
        layers_list (Sequence[int]): depths :math:`L` to sample.
        runs (int): independent samples per ``(sampler, L)`` (the paper uses 10).
        p_min (float): the keep rate :math:`p_{min}` (the paper: 0.05,
            :data:`PAPER_MEN_SETTING`).
        p_max (float): the keep rate :math:`p_{max}` (the paper: 1.0).
        seed (int, optional): base seed; each ``(sampler, L, run)`` gets :func:`run_seed`.
            (default: :obj:`0`)
        kernel (str, optional): kernel of ``fd`` / ``dropedge++``. (default: :obj:`"linear"`)
        num_sources (int, optional): ``None`` = exact when ``N <= EXACT_BY_DEFAULT_MAX_NODES``,
            else an estimate from :data:`MEN_RUNS_SOURCES` sampled source nodes; ``0`` = always
            exact; ``S > 0`` = estimate from ``S`` sources
            (:func:`dropedge_core.metrics.men_estimate`). (default: :obj:`None`)
        p (float, optional): the one keep rate of DropEdge / FD (``None``:
            ``(p_min + p_max) / 2``). (default: :obj:`None`)
        directed (bool, optional): sample each direction of an edge on its own.
            (default: :obj:`False`)
        on_sample (Callable[[], None], optional): called after each sample (a progress bar).
            (default: :obj:`None`)

    Returns:
        One row per ``(sampler, layers, run)``: ``sampler, layers, run, men,
        men_stderr`` (0 when exact), ``edge_numbers`` (a tuple of ``L`` floats,
        ``|Π_{i<=l} (A^(i) + I)|``), ``exact`` (bool), ``p_min, p_max``.

    Raises:
        MemoryLimitError: the deepest sample's MEN above ``$DROPEDGE_MAX_MEMORY_GB``
            (:func:`dropedge_explorer.memory.men_bytes`), before anything is drawn.
    """
    if runs < 1:
        raise ValueError(f"runs must be >= 1 (got {runs})")
    n = graph.num_nodes
    exact = num_sources == 0 or (num_sources is None and n <= EXACT_BY_DEFAULT_MAX_NODES)
    deepest = max((int(d) for d in layers_list), default=1)
    sources = n if exact else min(num_sources or MEN_RUNS_SOURCES, n)
    memory.check(memory.men_bytes(n, graph.num_edges, deepest, sources),
                 f"MEN at L={deepest} on {graph.name} (N={n}, M={graph.num_edges})",
                 "use fewer layers, fewer sources or a smaller graph")
    rows = []
    made = [make_sampler(name, p_min, p_max, kernel, p, directed) for name in sampler_names]
    for name, s in zip(sampler_names, made):  # loops over (sampler, depth, run): each is one sample
        for num_layers in layers_list:
            for run in range(runs):
                gen = torch.Generator().manual_seed(run_seed(seed, name, num_layers, run))
                masks = s.sample(graph, int(num_layers), generator=gen)
                est = metrics.men_measure(graph, masks, num_sources, generator=gen,
                                          exact_up_to=EXACT_BY_DEFAULT_MAX_NODES,
                                          default_sources=MEN_RUNS_SOURCES)
                rows.append({"sampler": name, "layers": int(num_layers), "run": run, "men": est.value,
                             "men_stderr": est.stderr, "edge_numbers": est.edge_numbers,
                             "exact": est.sources >= graph.num_nodes, "p_min": p_min, "p_max": p_max})
                if on_sample is not None:
                    on_sample()
    return pd.DataFrame(rows)


def men_summary(df: pd.DataFrame, curves: bool = False) -> pd.DataFrame:
    """Mean and standard deviation of MEN over runs: one row per ``(sampler, layers)``
    with ``men_mean, men_std, runs``, samplers in their first-seen order; with ``curves``
    also ``edge_numbers_mean``, ``edge_numbers_std`` (lists of ``L``), ``men_stderr_mean``
    and ``exact``.

    Args:
        df (pandas.DataFrame): rows of :func:`men_runs`.
        curves (bool, optional): also summarise the edge-number curves.
            (default: :obj:`False`)
    """
    order = list(dict.fromkeys(df["sampler"]))
    out = (df.groupby(["sampler", "layers"], sort=False)["men"]
             .agg(men_mean="mean", men_std="std", runs="count").reset_index())
    out["men_std"] = out["men_std"].fillna(0.0)
    if curves:  # the edge-number curve's mean and std per layer, and the mean standard error
        groups = df.groupby(["sampler", "layers"], sort=False)
        stacked = groups["edge_numbers"].agg(lambda c: np.array(list(c), dtype=float))
        out["edge_numbers_mean"] = [list(a.mean(0)) for a in stacked]
        out["edge_numbers_std"] = [list(a.std(0, ddof=1)) if len(a) > 1 else [0.0] * a.shape[1]
                                   for a in stacked]
        out["men_stderr_mean"] = groups["men_stderr"].mean().to_numpy()
        out["exact"] = groups["exact"].all().to_numpy()
    out["sampler"] = pd.Categorical(out["sampler"], categories=order, ordered=True)
    return out.sort_values(["sampler", "layers"]).assign(
        sampler=lambda d: d["sampler"].astype(str)).reset_index(drop=True)


def edge_number_table(df: pd.DataFrame, layers: int | None = None) -> pd.DataFrame:
    """Long table of edge numbers from :func:`men_runs`: one row per ``(sampler, run,
    layer)`` with ``edge_number``, for the depth ``layers`` (default: the deepest)."""
    depth = int(df["layers"].max()) if layers is None else int(layers)
    part = df[df["layers"] == depth]
    if part.empty:
        raise ValueError(f"no runs at depth {depth}; depths: {sorted(int(v) for v in df['layers'].unique())}")
    long = part[["sampler", "run", "edge_numbers"]].explode("edge_numbers")
    long["layer"] = long.groupby(["sampler", "run"]).cumcount()
    long = long.rename(columns={"edge_numbers": "edge_number"})
    long["edge_number"] = long["edge_number"].astype(float)
    long["layers"] = depth
    return long.reset_index(drop=True)


def edge_number_stats(df: pd.DataFrame, layers: int | None = None) -> pd.DataFrame:
    """The edge-number curve over runs at one depth (the paper's edge-number figure): one
    row per ``(sampler, layer)`` of :func:`edge_number_table` with ``mean, std, count``
    (``std`` 0 for one run) and ``layers`` (the depth).

    Args:
        df (pandas.DataFrame): rows of :func:`men_runs`.
        layers (int, optional): the depth (``None``: the deepest in ``df``).
            (default: :obj:`None`)
    """
    long = edge_number_table(df, layers)
    stats = (long.groupby(["sampler", "layer"], sort=False)["edge_number"]
                 .agg(["mean", "std", "count"]).reset_index().fillna({"std": 0.0}))
    return stats.assign(layers=int(long["layers"].iloc[0]))


def men_comparison(measured: pd.DataFrame, paper: pd.DataFrame, dataset: str) -> pd.DataFrame:
    """The paper's MEN table beside the measured one, for one dataset.

    Args:
        measured (pandas.DataFrame): rows of :func:`men_runs` (or its :func:`men_summary`).
        paper (pandas.DataFrame): the paper's table
            (:func:`dropedge_explorer.data.reference.paper_men`), columns ``dataset_key, sampler,
            layers, men``.
        dataset (str): dataset key (``"cora"``).

    Returns:
        One row per ``(sampler, layers)`` the paper reports: ``sampler, layers,
        paper_men, measured_men, measured_std, runs, ratio`` (measured / paper; ``nan``
        where nothing was measured).
    """
    summary = measured if "men_mean" in measured else men_summary(measured)
    ref = paper[paper["dataset_key"] == dataset][["sampler", "layers", "men"]]
    out = ref.rename(columns={"men": "paper_men"}).merge(
        summary.rename(columns={"men_mean": "measured_men", "men_std": "measured_std"}),
        on=["sampler", "layers"], how="left")
    out["ratio"] = out["measured_men"] / out["paper_men"]
    return out[["sampler", "layers", "paper_men", "measured_men", "measured_std", "runs",
                "ratio"]].reset_index(drop=True)


def smoothing_curves(graph: Graph, masks_by: dict[str, torch.Tensor], method: str = "AN",
                     max_features: int = 64, seed: int = 0) -> pd.DataFrame:
    """How node representations collapse under repeated propagation ``H_{l+1} = Â^(l) H_l``
    (a linear ``L``-layer GCN: Oono & Suzuki's over-smoothing, the paper's §3).

    ``H_0 = X``; step ``l + 1`` propagates with layer ``l``'s normalised kept adjacency
    (``method``, default the GCN renormalisation ``AN``). Measured at every step:
    ``subspace_distance`` — ``||H − P_M H||_F / ||H||_F`` to the subspace ``M`` of the
    full graph (:func:`dropedge_core.metrics.subspace_distance`), and
    ``dirichlet_energy`` relative to its value at step 0. Without dropping, both decay
    geometrically; sampled adjacencies slow the collapse.

    Features wider than ``max_features`` are first multiplied by a seeded Gaussian
    ``(C, max_features) / sqrt(max_features)`` matrix: propagation is linear, so this is
    the same as projecting every ``H_l``, and it keeps norms in expectation
    (Johnson–Lindenstrauss) at a fraction of the cost.

    Args:
        graph (Graph): the graph (its features are :math:`X = H_0`).
        masks_by (dict[str, torch.Tensor]): ``{sampler: (L, M) masks}``; ``L`` steps each.
        method (str, optional): the normalisation of the kept adjacency.
            (default: :obj:`"AN"`, the GCN renormalisation)
        max_features (int, optional): the widest features propagated before the random
            projection. (default: :obj:`64`)
        seed (int, optional): the seed of the projection. (default: :obj:`0`)

    Returns:
        One row per ``(sampler, step, measure)``: ``sampler, step, measure, value``.
    """
    x = graph.x.float()
    if x.size(1) > max_features:
        gen = torch.Generator().manual_seed(run_seed(seed, "projection"))
        x = x @ (torch.randn(x.size(1), max_features, generator=gen) / math.sqrt(max_features))
    n = graph.num_nodes
    rows = []
    for name, masks in masks_by.items():
        h = x
        e0 = metrics.dirichlet_energy(h, graph.undirected_edges)
        values = {"subspace_distance": [metrics.subspace_distance(h, graph)],
                  "dirichlet_energy": [1.0 if e0 > 0 else 0.0]}
        for ei, ew in normalization.adjacencies(graph, masks, method):  # a loop over layers
            h = normalization.propagate(normalization.to_sparse(ei, ew, n), h)
            values["subspace_distance"].append(metrics.subspace_distance(h, graph))
            e = metrics.dirichlet_energy(h, graph.undirected_edges)
            values["dirichlet_energy"].append(e / e0 if e0 > 0 else 0.0)
        for measure, vals in values.items():
            rows.append(pd.DataFrame({"sampler": name, "step": range(len(vals)),
                                      "measure": measure, "value": vals}))
    return pd.concat(rows, ignore_index=True)


def smoothing_spread(graph: Graph, names: Iterable[str], num_layers: int, p_min: float, p_max: float,
                     seed: int = 0, samples: int = 5, kernel: str = "linear",
                     method: str = "AN") -> pd.DataFrame:
    """:func:`smoothing_curves` over ``samples`` independent draws of the masks (sample
    seeds ``seed .. seed + samples - 1``; the feature projection stays that of ``seed``),
    summarised per ``(sampler, step, measure)``: one draw of a sampler can land on either
    side of another's, so a single curve says little about which keeps more signal.

    Args:
        graph (Graph): the graph.
        names (Iterable[str]): the samplers' names.
        num_layers (int): the depth :math:`L` (the propagation steps).
        p_min (float): the keep rate :math:`p_{min}`.
        p_max (float): the keep rate :math:`p_{max}`.
        seed (int, optional): the first draw's seed. (default: :obj:`0`)
        samples (int, optional): independent draws of the masks. (default: :obj:`5`)
        kernel (str, optional): the kernel of FD / DropEdge++. (default: :obj:`"linear"`)
        method (str, optional): the normalisation. (default: :obj:`"AN"`)

    Returns:
        ``sampler, step, measure, value`` (the mean over the draws), ``std`` (sample
        std, 0 for one draw), ``low``/``high`` (min/max over the draws) and ``samples``.

    Raises:
        MemoryLimitError: above ``$DROPEDGE_MAX_MEMORY_GB``
            (:func:`dropedge_explorer.memory.smoothing_bytes`), before anything is drawn.
    """
    if not isinstance(samples, int) or samples < 1:
        raise ValueError(f"samples must be a positive integer (got {samples!r})")
    memory.check(memory.smoothing_bytes(graph.num_nodes, graph.num_edges, num_layers, graph.num_features),
                 f"the over-smoothing curves of {graph.name} (N={graph.num_nodes}, M={graph.num_edges}, "
                 f"L={num_layers})", "pick fewer layers or a smaller graph")
    names = list(names)
    runs = [smoothing_curves(graph, masks_by_sampler(graph, names, num_layers, p_min, p_max, seed + i,
                                                     kernel),
                             method=method, seed=seed)
            for i in range(samples)]  # a loop over draws
    df = pd.concat(runs, ignore_index=True)
    out = (df.groupby(["sampler", "step", "measure"], sort=False)["value"]
             .agg(value="mean", std="std", low="min", high="max").reset_index())
    out["std"] = out["std"].fillna(0.0)
    out["samples"] = samples
    return out


def smoothing_at_last_step(df: pd.DataFrame, measure: str = "subspace_distance") -> dict[str, tuple]:
    """``{sampler: (mean, std)}`` of ``measure`` at the last propagation step of
    :func:`smoothing_spread` (or of :func:`smoothing_curves`: std 0).

    Args:
        df (pandas.DataFrame): :func:`smoothing_spread` (or :func:`smoothing_curves`).
        measure (str, optional): the measure read. (default: :obj:`"subspace_distance"`)
    """
    part = df[df["measure"] == measure]
    last = part[part["step"] == part["step"].max()]
    std = last["std"] if "std" in last else pd.Series(0.0, index=last.index)
    return {str(n): (float(v), float(s)) for n, v, s in zip(last["sampler"], last["value"], std)}
