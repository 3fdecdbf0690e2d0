"""Lesson mode: a guided path through over-smoothing and DropEdge++ for a class.

Seven steps. Each asks one question, draws one figure, and answers with a sentence written
from the number that answers it (:mod:`dropedge_explorer.studies.lesson_steps` for the steps on
the lesson's graph, :mod:`dropedge_explorer.studies.lesson_climax` for the trained models and
the bundled verdicts); the theory or the paper's claim it tests is set beside it, as such.
This module holds the content (:data:`STEPS`, :data:`GLOSSARY`) and builds each step's
numbers, sentence and figure; the page only lays them out.
"""
from __future__ import annotations

from dataclasses import dataclass

import pandas as pd
import plotly.graph_objects as go
from dropedge_core.graph import Graph

from dropedge_explorer import figures
from dropedge_explorer.figures import teaching as teaching_figures
from dropedge_explorer.figures.style import log_axis
from dropedge_explorer.studies import lesson_climax, lesson_steps, sampling, teaching

__all__ = [
    "GLOSSARY", "Step", "STEPS", "STEP_KEYS", "LESSON_DATASETS", "RECIPE_FILES", "step", "result_snapshots",
    "step_numbers", "step_sentence", "step_figure", "glossary_table",
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
    "class separation": "how far apart the classes are, measured on the full vectors: the share of "
                        "the spread that lies between the class averages. 1 = each class a point of "
                        "its own, 0 = the class averages coincide. The 2-D pictures are drawn so that "
                        "their own share is this number.",
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
    "ε-smoothing step": "the first averaging step at which the distance to the over-smoothing subspace "
                        "falls below ε (here 0.1): how long the vectors take to become (nearly) useless.",
    "geometric fall": "each step multiplies the distance by about the same factor r < 1, so after l "
                      "steps it is about r^l: a straight line on a log axis.",
    "old defaults / depth recipe": "two ways to train: the old defaults (lr 0.01, dropout 0.5, weight "
                                   "decay 5e-4, no self-feature term) and the depth recipe (lr 1e-3, no "
                                   "dropout, no weight decay, the self-feature term) made for deep GCNs.",
    "paired test, Holm": "runs of two samplers with the same seed start from the same weights, so they "
                         "are compared seed by seed (a paired t-test); Holm's correction accounts for "
                         "testing at every depth. Clear = corrected p below 0.05; 'not shown' is not "
                         "'false'.",
}


@dataclass(frozen=True)
class Step:
    """One step of the lesson: its question, and what the theory (or the paper) says.

    Args:
        key (str): the step's name in links and code (:data:`STEP_KEYS`).
        short (str): its label in the step picker.
        title (str): its heading.
        text (str): what its figure shows.
        question (str): the question its numbers answer.
        theory (str): what the theory (or the paper) says about it.
        symbols (tuple[str, ...]): the :data:`GLOSSARY` entries its figure and sentence use.
    """

    key: str
    short: str
    title: str
    text: str
    question: str
    theory: str
    symbols: tuple[str, ...]


STEPS: tuple[Step, ...] = (
    Step("propagation", "1 · Averaging", "1 · Averaging pulls every vector toward one subspace",
         "A graph convolution's core is H ← Â H: every node averages itself and its neighbours. No "
         "training, no weights: only averaging, repeated. Each panel draws the vectors on the two "
         "directions that separate the class averages best, spread scaled so the picture's class "
         "separation is the measured one.",
         "After many averaging steps, how far are the node vectors from the over-smoothing subspace?",
         "Theorem 1 (the paper, after Oono & Suzuki): repeated averaging converges to the subspace M "
         "where every node's vector is the same up to its degree; on the way, neighbours (mostly of "
         "one class) are first pulled together.",
         ("Â", "A + I", "D^-1/2", "H_l", "class separation", "subspace distance")),
    Step("depth", "2 · How fast", "2 · How fast: a geometric fall",
         "The same averaging, measured instead of drawn: the distance to the over-smoothing subspace "
         "and the Dirichlet energy (how different neighbours still are) after each step, log axis.",
         "By what factor does each averaging step shrink the distance to the subspace?",
         "Theorem 1: d_M(Â^l X) ≤ λ^l d_M(X), λ < 1 the graph's second-largest eigenvalue in "
         "magnitude (the Theory page measures λ).",
         ("Â", "subspace distance", "geometric fall", "Frobenius norm", "Dirichlet energy")),
    Step("dropping", "3 · DropEdge", "3 · Dropping edges slows the fall",
         "DropEdge keeps only a random share p of the edges at every step. Left: class separation; "
         "right: distance to the subspace with the ε line; all edges against DropEdge.",
         "Does dropping edges delay the step at which the vectors come within ε of the subspace?",
         "The paper: a sparser graph has more connected components and a λ closer to 1, so the "
         "convergence is slower. Slower convergence is about the vectors, not the classes: the "
         "class separation is a different number.",
         ("keep rate p", "ε-smoothing step", "subspace distance", "class separation")),
    Step("lid_ldd", "4 · LID vs LDD", "4 · Dropping more at the bottom: LID vs LDD",
         "LID and LDD keep the same number of edges in total, in a different order: LID sparsest at "
         "the input layer, LDD densest there. The curves count the node pairs the first l + 1 "
         "layers connect (their product).",
         "Same edges in total: which order connects fewer node pairs (a lower MEN)?",
         "The paper's Theorem 2-3: a lower MEN means slower over-smoothing, and LID's expected "
         "MEN bound is the lowest.",
         ("p_min, p_max", "p_max'", "LID / LDD", "MEN")),
    Step("fd", "5 · FD", "5 · Keeping similar-feature edges (FD)",
         "FD keeps edges whose two nodes have similar features more often. Solid: the share of "
         "same-class (intra) edges kept; dashed: different-class (inter); DropEdge beside FD.",
         "Which edges does FD keep more of: same-class or different-class?",
         "The paper's Theorem 4: averaging mostly within classes converges to a subspace that "
         "still carries the features.",
         ("FD / kernel", "intra / inter-class", "keep rate p")),
    Step("result", "6 · Trained", "6 · Trained deep GCNs: what fails first?",
         "Trained 16-layer GCNs on Cora (bundled, trained offline at today's code): each hidden "
         "layer drawn like step 1, NoDrop, DropEdge and DropEdge++ side by side. Switch the "
         "training recipe.",
         "In a deep GCN trained here, what fails first: training, or the classes merging?",
         "The usual story: deep GCNs fail because of over-smoothing. The models here let the class "
         "check it: whether a model trains and whether its hidden classes merge are two numbers.",
         ("old defaults / depth recipe", "class separation", "subspace distance", "test accuracy")),
    Step("verdicts", "7 · Verdicts", "7 · Where DropEdge++ helps, and where it does not",
         "The project's bundled runs of Cora semi, GCN, depth recipe: mean test accuracy by depth "
         "(bars: sample std over seeds), every sampler against the next in paired tests.",
         "At which depths do the runs show one sampler ahead of another?",
         "The paper's claim: DropEdge++ ≥ DropEdge ≥ NoDrop at 8 layers and more. The sentence "
         "says what the runs here show; the paper's own numbers are on the Paper tables page.",
         ("paired test, Holm", "test accuracy")),
)
STEP_KEYS: tuple[str, ...] = tuple(s.key for s in STEPS)
#: Datasets the lesson offers: small, built in, csbm's features carry class signal (FD needs it).
LESSON_DATASETS: tuple[str, ...] = ("csbm", "karate")
#: The bundled snapshots of step ``"result"`` by recipe.
RECIPE_FILES = {"deep": teaching.BUNDLED_SNAPSHOT, "old-defaults": teaching.BUNDLED_FAILING}


def step(key: str) -> Step:
    """The step named ``key``; raises :class:`ValueError` for another name.

    Args:
        key (str): a step's name (:data:`STEP_KEYS`).
    """
    for s in STEPS:
        if s.key == key:
            return s
    raise ValueError(f"unknown lesson step {key!r}; valid: {', '.join(STEP_KEYS)}")


def result_snapshots(recipe: str = "deep") -> teaching.Snapshots:
    """The bundled 16-layer Cora models of step ``"result"``.

    Args:
        recipe (str, optional): ``"deep"`` (the depth recipe) or ``"old-defaults"``.
            (default: :obj:`"deep"`)
    """
    return teaching.load_snapshots(RECIPE_FILES[recipe])


def step_numbers(key: str, graph: Graph | None = None, **args) -> dict:
    """The numbers that answer step ``key``: on ``graph`` for
    :data:`~dropedge_explorer.studies.lesson_steps.GRAPH_STEPS` (``args``: their controls), from
    the bundled snapshots and runs for ``"result"`` and ``"verdicts"``.

    Args:
        key (str): the step (:data:`STEP_KEYS`).
        graph (Graph, optional): the graph a graph step is measured on (required there).
        **args (dict): the step's controls (keep rate, layers, seed ...), passed on to
            :func:`~dropedge_explorer.studies.lesson_steps.step_numbers`.
    """
    step(key)
    if key == "result":
        return lesson_climax.trainability_numbers(result_snapshots("deep"), result_snapshots("old-defaults"))
    if key == "verdicts":
        return lesson_climax.verdict_numbers()
    if graph is None:
        raise ValueError(f"step {key!r} needs a graph")
    return lesson_steps.step_numbers(key, graph, **args)


def step_sentence(numbers: dict) -> str:
    """The answer written from ``numbers`` only.

    Args:
        numbers (dict): a step's numbers (:func:`step_numbers`).
    """
    if "models" in numbers:
        return lesson_climax.trainability_sentence(numbers)
    if "tests" in numbers:
        return lesson_climax.verdict_sentence(numbers)
    return lesson_steps.step_sentence(numbers)


def _curves(numbers: dict) -> pd.DataFrame:
    rows = [{"sampler": s, "step": k, "measure": m, "value": v[col][k]}
            for s, v in numbers["series"].items() for m, col in (("subspace_distance", "subspace"),
                                                               ("dirichlet_energy", "energy"))
            for k in range(len(v[col]))]
    return pd.DataFrame(rows)


def step_figure(key: str, numbers: dict, recipe: str = "deep", height: int = 420) -> go.Figure:
    """The figure of step ``key``, drawn from the same ``numbers`` its sentence is written from
    (step ``"result"`` draws the bundled snapshots of ``recipe``).

    Args:
        key (str): the step (:data:`STEP_KEYS`).
        numbers (dict): its numbers (:func:`step_numbers`).
        recipe (str, optional): step ``"result"``'s recipe (:func:`result_snapshots`).
            (default: :obj:`"deep"`)
        height (int, optional): the figure's height in pixels. (default: :obj:`420`)
    """
    if key == "result":
        snaps = result_snapshots(recipe)
        return teaching_figures.class_merge_animation(snaps, layer=snaps.num_layers, height=height)
    if key == "verdicts":
        clear = [r for r in numbers["tests"] if r["verdict"] != "not shown"]
        return teaching_figures.depth_verdict_figure(numbers["spread"], clear).update_layout(height=height)
    if key == "propagation":
        return teaching_figures.class_merge_animation(numbers["snaps"], layer=numbers["layers"], first=0,
                                                      prefix="averaging steps: ", height=height)
    if key == "depth":
        return figures.over_smoothing_demo(_curves(numbers)).update_layout(height=height)
    if key == "dropping":
        fig = teaching_figures.separation_curves(numbers["snaps"], first=0)
        for note, text in zip(fig.layout.annotations, ("class separation", "distance to the subspace")):
            note.text = text  # the page's column is narrow: the long titles ran into each other
        fig.add_hline(y=numbers["eps"], line_dash="dot", row=1, col=2,
                      annotation_text=f"ε = {numbers['eps']:g}")
        values = [v for series in numbers["series"].values() for v in series["subspace"]] + [numbers["eps"]]
        return fig.update_yaxes(log_axis(values), row=1, col=2).update_layout(height=height, title=None)
    if key == "lid_ldd":
        return figures.edge_number_curves(
            sampling.edge_number_stats(numbers["runs"], numbers["layers"])).update_layout(height=height)
    return figures.intra_inter_share(numbers["table"]).update_layout(height=height)


def glossary_table(key: str) -> pd.DataFrame:
    """``symbol, meaning`` of the symbols step ``key`` shows.

    Args:
        key (str): the step (:data:`STEP_KEYS`).
    """
    return pd.DataFrame([{"symbol": s, "meaning": GLOSSARY[s]} for s in step(key).symbols])
