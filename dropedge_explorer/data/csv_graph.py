"""A user's own graph from CSV files.

``parse_graph(edges, features, labels)`` turns an uploaded edge list plus optional
node features and labels into a :class:`~dropedge_core.graph.Graph`, and returns the
list of repairs it made. Every defect it cannot repair raises :class:`UploadError`
with a one-line message naming the file, the line, the bad value and what is allowed.

The files are read as **data only**: text is decoded as UTF-8 and split into cells;
nothing is ever unpickled, evaluated or imported. A Python pickle of any protocol
(protocol 0 is ASCII lines) is refused as one, read as opcodes only
(:mod:`dropedge_explorer.data._csv_guards`).

File format, shared by the three files:

* UTF-8 text (a BOM is fine), ``\\n``, ``\\r\\n`` or ``\\r`` line ends; blank lines
  and lines starting with ``#`` are ignored. Line numbers in messages are the 1-based
  lines of the file as a text editor shows them.
* Cells are separated by commas; a file whose first row has no comma but spaces or
  tabs is split on runs of spaces/tabs instead (SNAP-style edge lists). Cells are
  stripped of surrounding spaces and of one pair of surrounding double quotes.
* An optional header row: the first row is a header when none of its cells is a
  number (``source,target``, ``f0,f1,...``, ``node,label``). A note says so.
* Numbers (ids, features, labels) are written in ASCII digits: a cell in other digits
  (full-width ``０``, Arabic-Indic ``٠``) is refused on any line, line 1 included (it is
  a number, so that row is no header).

The three files:

* **edges** (required): two columns ``source,target`` of node ids, integers ``>= 0``.
  Self-loops and duplicate edges (in either direction) are dropped, with a note.
* **features** (optional): ``N`` rows of ``C`` finite numbers, row ``i`` the features
  of node ``i``; they fix ``N``, so every node id must be below the row count. Rows
  are L1-normalised. Without features every node gets one constant feature.
* **labels** (optional), either one column, one label per node in node order
  (``N`` rows; with no features and more rows than the edge list needs, the extra rows
  are isolated nodes), or two columns ``node,label`` for some nodes. A label is an
  integer ``>= 0`` or a class name; ``-1``, ``nan`` or an empty cell means "no label". Integer
  labels ``0..K-1`` are the class ids; any other set of labels (names, or integers
  with gaps) is mapped to class ids ``0..K-1`` in sorted order (numeric order for
  integers), with a note. Unlabelled nodes get ``y = -1`` and are in no split.
  One column of class names without a header: the first row is a label when the
  file has exactly one row per node, else a header.

``N`` is the feature row count when features are given, else ``max id + 1`` over the
edges and the two-column labels (or the one-column label count, if larger). Splits are
20 train / 30 validation nodes per class, the rest test, drawn from ``seed``
(:func:`~dropedge_core.datasets.per_class_split`).

Parsing is vectorised (pandas string methods on Arrow strings): one pass splits every
line, and checks find the first bad cell with ``argmax``; there is no Python loop over
edges. A 20 MB edge list (~2M edges) parses in a few seconds.
"""
from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import torch
from dropedge_core.datasets import per_class_split
from dropedge_core.graph import Graph, l1_normalize_rows, simple_undirected_edges

from dropedge_explorer import memory
from dropedge_explorer.data._csv_files import parse_edges, parse_features, parse_labels
from dropedge_explorer.data.csv_reader import (
    MAX_BYTES,
    MAX_NODES,
    Source,
    UploadError,
    has_or_have,
    read_source,
    show_cell,
)

__all__ = ["COMPACT_ABOVE", "parse_graph", "load_files"]

#: Without features, ids far beyond the nodes present are renumbered: when more than
#: this many ids (and more than half of ``0..max id``) have neither an edge nor a label.
COMPACT_ABOVE = 1000
TRAIN_PER_CLASS, VAL_PER_CLASS = 20, 30


# ----------------------------------------------------------------------------- the graph


def _compact(pairs: np.ndarray, y: torch.Tensor, n: int) -> tuple[np.ndarray, torch.Tensor, int, list[str]]:
    """Renumber node ids when most of ``0..n-1`` has neither an edge nor a label.

    A ten-byte edge list ``0,9999999`` names ten million nodes; without a features file
    nothing else holds them. The nodes present keep their order (increasing id) and get
    ids ``0..K-1``; a note says so. Otherwise the ids are kept as given.
    """
    present = np.zeros(n, dtype=bool)
    present[pairs.reshape(-1)] = True
    present |= (y >= 0).numpy()
    kept = int(present.sum())
    if n - kept <= max(COMPACT_ABOVE, kept):
        return pairs, y, n, []
    new_id = np.cumsum(present) - 1
    note = (f"node ids go up to {n - 1} but only {kept} nodes have an edge or a label: renumbered "
            f"them 0..{kept - 1} in increasing id order (the graph uses the new ids)")
    return new_id[pairs], y[torch.from_numpy(present)], kept, [note]



def _check_parse_memory(texts: list[str]) -> None:
    """Refuse, before any file is split, files whose parse would exceed the memory limit
    (a 20 MB file of ten million one-character rows is ten million cells, ~1 GiB to read).
    Cells are counted as separators plus line ends: an upper bound, found in C."""
    size = sum(len(t) for t in texts)
    cells = sum(t.count(",") + t.count("\n") + t.count("\t") + t.count(" ") + 1 for t in texts)
    try:
        memory.check(memory.parse_bytes(size, cells), f"reading the uploaded files (up to {cells} cells)",
                     "upload smaller files")
    except memory.MemoryLimitError as exc:
        raise UploadError(str(exc)) from None


def parse_graph(edges: Source, features: Source | None = None, labels: Source | None = None,
                name: str = "upload", seed: int = 0, max_bytes: int = MAX_BYTES,
                max_nodes: int = MAX_NODES) -> tuple[Graph, list[str]]:
    """A :class:`Graph` from an uploaded edge list and optional features and labels.

    See the module docstring for the file format. Repairs (self-loops, duplicate
    edges) and facts a user should know (headers read, no features, unlabelled
    nodes, isolated nodes, class-id mapping) come back as one-line notes.

    Args:
        edges (bytes or str or Path or file): the edge list: ``bytes``, CSV text
            (``str``), a ``pathlib.Path`` or a file object with ``.read()``.
        features (bytes or str or Path or file, optional): node features (same kinds).
            (default: :obj:`None`: one constant feature)
        labels (bytes or str or Path or file, optional): node labels (same kinds).
            (default: :obj:`None`: no labels, no splits)
        name (str, optional): the graph's name. (default: :obj:`"upload"`)
        seed (int, optional): seed of the 20/30-per-class split. (default: :obj:`0`)
        max_bytes (int, optional): size limit of each file. (default: 20 MB)
        max_nodes (int, optional): largest allowed ``N`` (guards against a stray huge id
            allocating a huge graph). (default: :data:`MAX_NODES`)

    Returns:
        tuple[Graph, list[str]]: ``(graph, notes)``.

    Raises:
        UploadError: any defect, with a one-line message.

    Example:
        >>> g, notes = parse_graph(b"source,target\\n0,1\\n1,0\\n1,2\\n2,2\\n", labels=b"0\\n1\\n1\\n")
        >>> g.num_nodes, g.num_edges, g.undirected_edges.tolist(), g.y.tolist()
        (3, 2, [[0, 1], [1, 2]], [0, 1, 1])
        >>> notes[1:3]
        ['dropped 1 self-loop', 'dropped 1 duplicate edge (the same pair again, in either direction)']
    """
    # Read every file first: size and encoding problems come before content problems.
    e_src = read_source(edges, "edges.csv", max_bytes)
    f_src = read_source(features, "features.csv", max_bytes) if features is not None else None
    l_src = read_source(labels, "labels.csv", max_bytes) if labels is not None else None
    _check_parse_memory([e_src[1]] + [src[1] for src in (f_src, l_src) if src is not None])
    x_raw, pairs, y, class_names, notes = _read_nodes(e_src, f_src, l_src, max_nodes)
    n = y.numel()
    und, more = _simple_edges(pairs, n, e_src[0])
    x, more_x = _node_features(x_raw, n)
    (train, val, test), more_y = _splits(y, class_names, seed)
    notes += more + more_x + more_y
    files = {"edges": e_src[0]}
    if f_src is not None:
        files["features"] = f_src[0]
    if l_src is not None:
        files["labels"] = l_src[0]
    num_classes = len(class_names)
    info = {"source": "upload", "files": files,
            "split": f"{TRAIN_PER_CLASS}/{VAL_PER_CLASS} per class, seed {seed}" if num_classes else "none",
            "class_names": class_names, "notes": list(notes)}
    return Graph(name, x, y, und, train, val, test, num_classes, info), notes


def _read_nodes(e_src: tuple[str, str], f_src: tuple[str, str] | None, l_src: tuple[str, str] | None,
                max_nodes: int) -> tuple[np.ndarray | None, np.ndarray, torch.Tensor, list[str], list[str]]:
    """The three files parsed in the order that fixes ``N``: features (their rows), then
    the edges (ids below ``N``, or ``max id + 1``), then the labels (which may add nodes).
    Returns ``(x_raw or None, (E, 2) pairs, (N,) y, class names, notes)``; without
    features, ids far beyond the nodes present are renumbered (:func:`_compact`)."""
    notes: list[str] = []
    x_raw = None
    if f_src is not None:
        x_raw, more = parse_features(f_src[1], f_src[0], max_nodes)
        notes += more
        n = x_raw.shape[0]
        why = f"{f_src[0]} has {n} rows, so ids must be 0..{n - 1}"
    else:
        n, why = max_nodes, f"ids must be below {max_nodes} (renumber the nodes 0..N-1)"
    pairs, more = parse_edges(e_src[1], e_src[0], n, why)
    notes += more
    if x_raw is None:
        n = int(pairs.max()) + 1
    class_names: list[str] = []
    y = torch.full((n,), -1, dtype=torch.long)
    if l_src is not None:
        lab = parse_labels(l_src[1], l_src[0], n, f_src[0] if f_src else None, max_nodes)
        notes += lab.notes
        n = max(n, lab.y.size)
        y = torch.full((n,), -1, dtype=torch.long)
        y[:lab.y.size] = torch.from_numpy(lab.y)
        class_names = lab.class_names
    if x_raw is None:
        pairs, y, n, more = _compact(pairs, y, n)
        notes += more
    try:
        memory.check(memory.graph_bytes(n, len(pairs), 1 if x_raw is None else x_raw.shape[1]),
                     f"the uploaded graph (N={n}, {len(pairs)} edge rows)", "upload a smaller graph")
    except memory.MemoryLimitError as exc:
        raise UploadError(str(exc)) from None
    return x_raw, pairs, y, class_names, notes


def _simple_edges(pairs: np.ndarray, n: int, e_name: str) -> tuple[torch.Tensor, list[str]]:
    """The ``(2, M)`` simple undirected edges of the ``(E, 2)`` rows, and notes on the
    self-loops and duplicates dropped and the nodes left without an edge."""
    raw_edges = torch.from_numpy(pairs.T.copy())
    loops = int((raw_edges[0] == raw_edges[1]).sum())
    und = simple_undirected_edges(raw_edges, n)
    dups = raw_edges.size(1) - loops - und.size(1)
    if und.size(1) == 0:
        raise UploadError(f"{e_name} has no edge between two different nodes ({loops} self-loop"
                          f"{'s' * (loops != 1)} only); expected rows 'source,target' with source != target")
    notes = []
    if loops:
        notes.append(f"dropped {loops} self-loop{'s' * (loops != 1)}")
    if dups:
        notes.append(f"dropped {dups} duplicate edge{'s' * (dups != 1)} "
                     f"(the same pair again, in either direction)")
    isolated = n - int(torch.unique(und).numel())
    if isolated:
        notes.append(f"{isolated} of {n} nodes {has_or_have(isolated)} no edges")
    return und, notes


def _node_features(x_raw: np.ndarray | None, n: int) -> tuple[torch.Tensor, list[str]]:
    """Row-L1-normalised features (one constant feature without a file), and notes."""
    if x_raw is None:
        return torch.ones(n, 1), ["no features: using a constant feature; the feature-dependent sampler "
                                  "then equals uniform"]
    x64 = torch.tensor(x_raw, dtype=torch.float64)
    # scale each row by its largest entry first: an L1 sum of huge finite values
    # would overflow to inf (and float32 cannot hold them at all)
    x64 = x64 / x64.abs().amax(dim=1, keepdim=True).clamp(min=torch.finfo(torch.float64).tiny)
    x = l1_normalize_rows(x64)
    zero = int((x.abs().sum(dim=1) == 0).sum())
    notes = [f"{zero} of {n} nodes {has_or_have(zero)} all-zero features (their edges get the "
             f"smallest kernel weight)"] if zero else []
    return x, notes


def _splits(y: torch.Tensor, class_names: list[str], seed: int
            ) -> tuple[tuple[torch.Tensor, torch.Tensor, torch.Tensor], list[str]]:
    """The 20/30-per-class split drawn from ``seed`` (none without labels), and notes on
    unlabelled nodes, a single class and classes too small for a test node."""
    n, num_classes = y.numel(), len(class_names)
    if num_classes == 0:
        none = torch.zeros(n, dtype=torch.bool)
        return (none, none.clone(), none.clone()), ["no labels: training is unavailable; the samplers "
                                                    "and MEN still work"]
    notes = []
    labelled = int((y >= 0).sum())
    if labelled < n:
        notes.append(f"{n - labelled} of {n} nodes {has_or_have(n - labelled)} no label; "
                     f"{'it is' if n - labelled == 1 else 'they are'} in no split")
    if num_classes == 1:
        notes.append(f"every labelled node has the same label ({show_cell(class_names[0])}): one class, "
                     f"so training is unavailable (every prediction would be right)")
    split = per_class_split(y, TRAIN_PER_CLASS, VAL_PER_CLASS, torch.Generator().manual_seed(seed))
    sizes = torch.bincount(y[y >= 0], minlength=num_classes)
    small = int((sizes <= TRAIN_PER_CLASS + VAL_PER_CLASS).sum())
    if small:
        notes.append(f"{small} of {num_classes} classes {has_or_have(small)} at most "
                     f"{TRAIN_PER_CLASS + VAL_PER_CLASS} labelled nodes: after {TRAIN_PER_CLASS} "
                     f"train and {VAL_PER_CLASS} validation nodes per class they have no test nodes")
    return split, notes


def load_files(edges_path: str | os.PathLike[str], features_path: str | os.PathLike[str] | None = None,
               labels_path: str | os.PathLike[str] | None = None, name: str | None = None,
               seed: int = 0, max_bytes: int = MAX_BYTES,
               max_nodes: int = MAX_NODES) -> tuple[Graph, list[str]]:
    """:func:`parse_graph` on files given by path (the CLI's entry point).

    ``name`` defaults to the edge file's stem. Every path, ``str`` or not, is a path.

    Args:
        edges_path (str or os.PathLike): the edge list's file.
        features_path (str or os.PathLike, optional): the features' file. (default: :obj:`None`)
        labels_path (str or os.PathLike, optional): the labels' file. (default: :obj:`None`)
        name (str, optional): the graph's name. (default: :obj:`None`: the edge file's stem)
        seed (int, optional): seed of the 20/30-per-class split. (default: :obj:`0`)
        max_bytes (int, optional): size limit of each file. (default: 20 MB)
        max_nodes (int, optional): largest allowed ``N``. (default: :data:`MAX_NODES`)

    Returns:
        tuple[Graph, list[str]]: ``(graph, notes)``, as :func:`parse_graph`.
    """
    edges = Path(edges_path)
    return parse_graph(edges,
                       Path(features_path) if features_path is not None else None,
                       Path(labels_path) if labels_path is not None else None,
                       name=name or edges.stem, seed=seed, max_bytes=max_bytes, max_nodes=max_nodes)
