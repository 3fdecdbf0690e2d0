"""Lesson mode: a guided path through over-smoothing and DropEdge++ for a class.

Six steps, each one figure, two or three controls, a question to ask the class and what to
look for, and plain-language help for every symbol it shows. This module holds the
content (:data:`STEPS`, :data:`GLOSSARY`) and the one study each step needs
(:func:`step_data`); the page only lays them out.
"""
from __future__ import annotations

from dataclasses import dataclass

import pandas as pd
import plotly.graph_objects as go

from dropedge_core import figures
from dropedge_core.figures import teaching as teaching_figures
from dropedge_core.figures.style import sampler_label
from dropedge_core.method.graph import Graph
from dropedge_core.studies import merging, sampling, teaching

__all__ = [
    "GLOSSARY", "Step", "STEPS", "STEP_KEYS", "LESSON_DATASETS", "step", "result_snapshots",
    "step_caption", "step_figure", "glossary_table",
]

#: Plain-language help for every symbol a step shows.
GLOSSARY: dict[str, str] = {
    "Â": "the normalised adjacency matrix: multiplying by it replaces each node's vector by a "
         "weighted average of its own and its neighbours' vectors (one round of message passing).",
    "A + I": "the graph's adjacency matrix A (1 where two nodes are linked) plus the identity I: "
             "every node also counts as its own neighbour.",
    "D^-1/2": "D is the diagonal matrix of the degrees of A + I (neighbours + 1). Multiplying by "
              "D^-1/2 on both sides divides the weight of edge (i, j) by √(deg i · deg j), so that "
              "busy nodes do not drown out quiet ones.",
    "H_l": "the node representations after l layers: one row (a vector) per node.",
    "class separation": "how far apart the classes are, measured on the full vectors (not the 2-D "
                        "picture): the share of the spread that lies between the class averages. "
                        "1 = each class a point of its own, 0 = the class averages coincide.",
    "subspace distance": "how far the representations are from the over-smoothing subspace, where "
                         "every node's vector is the same up to a factor set by its degree; "
                         "0 = fully over-smoothed. Measured with the Frobenius norm.",
    "Frobenius norm": "‖H‖_F, the size of a whole matrix: the square root of the sum of all its "
                      "squared entries (the length of the matrix read as one long vector).",
    "Dirichlet energy": "the sum over edges of the squared difference between the two end nodes' "
                        "(degree-scaled) vectors: 0 when neighbours are identical.",
    "MAD": "mean average (cosine) distance between the node vectors: 0 when they all point the "
           "same way (over-smoothed).",
    "keep rate p": "the fraction of the graph's edges a layer keeps (DropEdge drops the rest, "
                   "a fresh random choice at every training step).",
    "p_min, p_max": "the keep rates of the bottom (input) layer and of the top layer; the layers "
                    "in between go linearly from one to the other.",
    "p_max'": "the paper's way of writing p_max in its tables: (p_max − p_min) / (1 − p_min), the "
              "share of the edges left after the bottom layer that the top layer adds.",
    "LID / LDD": "layer-increasingly / -decreasingly dependent sampling: each layer's edges are a "
                 "subset of the layer above (LID: the bottom is sparsest) or below (LDD: the "
                 "bottom is densest).",
    "MEN": "Mean-Edge-Number: the number of node pairs connected by the product of the first "
           "l + 1 layers' adjacencies, averaged over l. Lower = slower over-smoothing.",
    "FD / kernel": "feature-dependent sampling: an edge is kept with a probability that grows with "
                   "the similarity (the kernel, e.g. the dot product) of its two nodes' features.",
    "intra / inter-class": "an edge between two nodes of the same class (intra) or of different "
                           "classes (inter).",
    "test accuracy": "the share of the held-out test nodes whose class the trained model predicts.",
}


@dataclass(frozen=True)
class Step:
    """One step of the lesson."""

    key: str
    short: str
    title: str
    text: str
    question: str
    look_for: str
    symbols: tuple[str, ...]


STEPS: tuple[Step, ...] = (
    Step("propagation", "1 · Propagation", "1 · What propagation does",
         "A graph convolution's core is H ← Â H: every node averages itself and its neighbours. "
         "Here there is no training and no weight, only averaging, repeated; one 2-D view of "
         "the node vectors, coloured by class.",
         "Press ▶. After one or two averaging steps, are the classes easier or harder to tell "
         "apart? And after many?",
         "At first the clouds tighten: neighbours mostly share a class, so averaging removes "
         "noise (why a 2-layer GCN works). Then every class slides onto the same line: the "
         "class separation falls and the subspace distance goes to 0.",
         ("Â", "A + I", "D^-1/2", "H_l", "class separation", "subspace distance")),
    Step("depth", "2 · Depth", "2 · Over-smoothing with depth",
         "The same averaging, measured instead of drawn: how far the vectors are from the "
         "over-smoothing subspace, and how different neighbours still are, after each layer.",
         "How many layers until the curves are (almost) at zero? What would a classifier on "
         "top of those vectors see?",
         "Both fall like a geometric series (a straight line on the log axis): each layer "
         "multiplies the distance by about the same factor λ < 1. After a few dozen layers all "
         "that is left is each node's degree — no class information.",
         ("Â", "subspace distance", "Frobenius norm", "Dirichlet energy")),
    Step("dropping", "3 · DropEdge", "3 · Dropping edges (DropEdge)",
         "DropEdge keeps only a random share p of the edges (a new draw at every training "
         "step). Fewer edges: each average mixes fewer nodes. Left: all edges; right: DropEdge.",
         "Move the keep rate down. Do the classes stay apart for more steps? What happens at a "
         "keep rate near 0?",
         "With fewer edges the collapse is slower (the numbers above the right panel stay "
         "higher). At p = 0 nothing is averaged at all: no over-smoothing, but no use of the "
         "graph either — the keep rate is a trade-off.",
         ("keep rate p", "class separation", "subspace distance")),
    Step("lid_ldd", "4 · LID vs LDD", "4 · Dropping more at the bottom: LID vs LDD",
         "LID and LDD keep the same number of edges in total, only in a different order: LID "
         "sparsest at the input layer, LDD densest there. The curves count the node pairs that "
         "the first l + 1 layers connect (their product).",
         "Same edges in total — so why does one curve stay lower? Which would over-smooth "
         "slower?",
         "LID's curve stays below LDD's at every layer: a sparse bottom layer keeps the product "
         "small for longer. Lower MEN, slower over-smoothing (the paper's Theorem 2).",
         ("p_min, p_max", "p_max'", "LID / LDD", "MEN")),
    Step("fd", "5 · FD", "5 · Keeping similar-feature edges (FD)",
         "FD keeps edges whose two nodes have similar features more often. Solid: the share "
         "of same-class (intra) edges kept; dashed: the share of different-class (inter) "
         "edges kept; DropEdge (uniform) beside FD.",
         "Which edges does FD prefer? Why would averaging over those edges hurt less?",
         "FD keeps a larger share of intra-class edges than of inter-class ones (DropEdge keeps "
         "both alike): averaging then mixes mostly nodes of the same class, and the subspace it "
         "converges to still carries the features (the paper's Theorem 4).",
         ("FD / kernel", "intra / inter-class", "keep rate p")),
    Step("result", "6 · At depth", "6 · The result at depth",
         "Trained 16-layer GCNs on Cora (bundled, trained offline): each hidden layer's view, "
         "NoDrop, DropEdge and DropEdge++ side by side, with the test accuracy of each.",
         "Which model keeps the classes apart at layer 15? Does that match the test accuracies?",
         "The sentence under the figure is read off the numbers above the panels: which model "
         "merges the classes and which keeps them apart. Set it beside the test accuracies in "
         "the panel titles: a model can keep the classes apart in its hidden layers and still "
         "classify worse. Switch the training recipe: under the old defaults a deep GCN may not "
         "train at all — dropping edges helps a deep GCN that can train, it does not rescue one "
         "that cannot.",
         ("class separation", "subspace distance", "test accuracy")),
)
STEP_KEYS: tuple[str, ...] = tuple(s.key for s in STEPS)
#: Datasets the lesson offers: small, built in, csbm's features carry class signal (FD needs it).
LESSON_DATASETS: tuple[str, ...] = ("csbm", "karate")


def step(key: str) -> Step:
    """The step named ``key`` (:data:`STEP_KEYS`)."""
    for s in STEPS:
        if s.key == key:
            return s
    raise ValueError(f"unknown lesson step {key!r}; valid: {', '.join(STEP_KEYS)}")


def result_snapshots(recipe: str = "deep") -> teaching.Snapshots:
    """The bundled 16-layer Cora models of step ``"result"`` (``"deep"`` or ``"old-defaults"``)."""
    path = teaching.BUNDLED_SNAPSHOT if recipe == "deep" else teaching.BUNDLED_FAILING
    return teaching.load_snapshots(path)


def step_caption(key: str, recipe: str = "deep") -> str | None:
    """The sentence under step ``key``'s figure that is computed from its numbers (step
    ``"result"``: :func:`dropedge_core.studies.merging.trend_caption`); ``None`` for the others."""
    return merging.trend_caption(result_snapshots(recipe), label=sampler_label) if key == "result" else None


def step_figure(key: str, graph: Graph | None, layers: int = 8, keep: float = 0.5,
                p_min: float = 0.2, p_max: float = 0.9, kernel: str = "linear", recipe: str = "deep",
                seed: int = 0, height: int = 420) -> go.Figure:
    """The figure of step ``key`` on ``graph`` (step ``"result"`` uses the bundled Cora
    snapshots, ``recipe`` ``"deep"`` or ``"old-defaults"``; the others need ``graph``).

    ``layers`` is the number of propagation steps or layers; ``keep`` DropEdge's (and
    FD's) keep rate; ``p_min``/``p_max`` LID's and LDD's; ``kernel`` FD's.
    """
    step(key)
    if key == "result":
        snaps = result_snapshots(recipe)
        return teaching_figures.class_merge_animation(snaps, layer=snaps.num_layers, height=height)
    if graph is None:
        raise ValueError(f"step {key!r} needs a graph")
    if key in ("propagation", "dropping"):
        names = ("nodrop",) if key == "propagation" else ("nodrop", "dropedge")
        masks = sampling.masks_by_sampler(graph, names, layers, keep, keep, seed)
        snaps = teaching.propagation_snapshots(graph, masks, seed=seed)
        return teaching_figures.class_merge_animation(
            snaps, layer=0 if key == "propagation" else layers, first=0,
            prefix="averaging steps: ", height=height)
    if key == "depth":
        masks = sampling.masks_by_sampler(graph, ("nodrop",), layers, 1.0, 1.0, seed)
        fig = figures.over_smoothing_demo(sampling.smoothing_curves(graph, masks, seed=seed))
        return fig.update_layout(height=height)
    if key == "lid_ldd":
        df = sampling.men_runs(graph, ("lid", "ldd"), (layers,), 5, p_min, p_max, seed=seed)
        return figures.edge_number_curves(sampling.edge_number_stats(df, layers)).update_layout(height=height)
    masks = {name: sampling.sample_masks(graph, name, layers, keep, keep, seed, kernel=kernel)
             for name in ("dropedge", "fd")}
    shares = sampling.intra_inter_by_sampler(graph, masks)
    return figures.intra_inter_share(shares).update_layout(height=height)


def glossary_table(key: str) -> pd.DataFrame:
    """``symbol, meaning`` of the symbols step ``key`` shows."""
    return pd.DataFrame([{"symbol": s, "meaning": GLOSSARY[s]} for s in step(key).symbols])
