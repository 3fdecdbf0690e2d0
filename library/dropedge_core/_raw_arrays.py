"""Checking a dataset's raw arrays before any native code touches them.

scipy's and torch's kernels believe the arrays they are given: a CSR matrix whose
column index is past its width, or whose ``indptr`` runs past the end of ``indices``,
makes ``toarray()`` / ``tocoo()`` read and write outside their buffers (a segmentation
fault, which in the app takes the whole server with it), and a negative node id is an
index from the end. So every array read from a Planetoid pickle or a Coauthor/Amazon
``.npz`` goes through a function here first, and a bad one is a
:class:`RawDataError` whose one line names the file and what is wrong with it.

* :func:`check_csr`: a CSR triple (``data``, ``indices``, ``indptr``, ``shape``):
  1-d numeric arrays, a non-negative 2-d shape, ``len(indptr) == rows + 1``,
  ``indptr[0] == 0``, non-decreasing, ``indptr[-1] == len(indices) == len(data)``,
  ``0 <= indices < cols``; only then is a ``scipy.sparse.csr_matrix`` built.
* :func:`csr_from_state`: the same, for the attributes a pickled matrix held
  (:class:`~dropedge_core._safe_pickle.CSRState`).
* :func:`adjacency_dict_edges`: ``ind.<name>.graph`` (a dict of neighbour lists) as an
  edge array, every id an integer in ``0..N-1``.
* :func:`open_npz`: a ``.npz`` whose members' uncompressed sizes (the zip headers'
  ``file_size``, which ``zipfile`` never reads past) fit ``DROPEDGE_MAX_MEMORY_GB``,
  checked before anything is decompressed.
"""
from __future__ import annotations

import re
import zipfile
from importlib import import_module
from itertools import chain
from pathlib import Path

import numpy as np
import torch

from dropedge_core import _safe_pickle as safe_pickle
from dropedge_core import limits
from dropedge_core._safe_pickle import CSRState

MAX_CLASSES = 1000  # class ids a raw file's labels may use (the datasets here have up to 15)


class RawDataError(ValueError):
    """A raw dataset array is inconsistent; the message is one line naming the file."""


def _vector(value: object, what: str, kinds: str, name: str) -> np.ndarray:
    if not isinstance(value, np.ndarray) or value.ndim != 1 or value.dtype.kind not in kinds:
        shape = getattr(value, "shape", None)
        dtype = getattr(value, "dtype", type(value).__name__)
        raise RawDataError(f"{name}: {what} is not a 1-d {'integer' if kinds == 'iu' else 'numeric'} array "
                           f"(got {dtype}{'' if shape is None else f' of shape {tuple(shape)}'})")
    return np.asarray(value)


def _shape(value: object, name: str) -> tuple[int, int]:
    dims = np.asarray(value, dtype=object).reshape(-1) if value is not None else np.array([])
    if dims.size != 2 or not all(isinstance(d, (int, np.integer)) and not isinstance(d, bool) for d in dims):
        raise RawDataError(f"{name}: the matrix shape {str(value)[:40]} is not two integers")
    rows, cols = int(dims[0]), int(dims[1])
    if not (0 <= rows < 2**62 and 0 <= cols < 2**62):
        raise RawDataError(f"{name}: the matrix shape ({rows}, {cols}) is not two sizes >= 0")
    return rows, cols


def check_csr(data: object, indices: object, indptr: object, shape: object, name: str):
    """A ``scipy.sparse.csr_matrix`` from a CSR triple, after checking it is one.

    Args:
        data (object): the values, as read from the file.
        indices (object): the column indices, as read from the file.
        indptr (object): the row pointers, as read from the file.
        shape (object): ``(rows, cols)`` as read from the file.
        name (str): what to call the matrix in messages (``"ind.cora.x"``).

    Returns:
        scipy.sparse.csr_matrix: the matrix.

    Raises:
        RawDataError: the first inconsistency found, e.g. ``ind.cora.x: column index
            5000 is outside 0..1432 (entry 17)``.
    """
    sp = import_module("scipy.sparse")
    rows, cols = _shape(shape, name)
    data = _vector(data, "data", "biuf", name)
    indices = _vector(indices, "indices", "iu", name)
    indptr = _vector(indptr, "indptr", "iu", name)
    if indptr.size != rows + 1:
        raise RawDataError(f"{name}: indptr has {indptr.size} entries; a matrix of {rows} rows needs "
                           f"{rows + 1}")
    ptr = indptr.astype(np.int64) if indptr.dtype != np.uint64 or not indptr.size or \
        int(indptr.max()) < 2**63 else None
    if ptr is None or ptr[0] != 0:
        raise RawDataError(f"{name}: indptr starts at {int(indptr[0])}, not 0")
    step = np.diff(ptr)
    if (step < 0).any():
        i = int(np.argmax(step < 0))
        raise RawDataError(f"{name}: indptr decreases at row {i} ({int(ptr[i])} -> {int(ptr[i + 1])})")
    nnz = int(ptr[-1])
    if not nnz == indices.size == data.size:
        raise RawDataError(f"{name}: indptr ends at {nnz} but there are {indices.size} indices and "
                           f"{data.size} values")
    if nnz:
        low, high = int(indices.min()), int(indices.max())
        if low < 0 or high >= cols:
            bad = low if low < 0 else high
            entry = int(np.argmax(indices == bad))
            raise RawDataError(f"{name}: column index {bad} is outside 0..{cols - 1} (entry {entry})")
    index_dtype = np.int32 if max(nnz, cols) < 2**31 else np.int64
    return sp.csr_matrix((data, indices.astype(index_dtype), ptr.astype(index_dtype)), shape=(rows, cols))


def csr_from_state(state: CSRState, name: str):
    """:func:`check_csr` of the attributes a pickled ``csr_matrix`` held.

    Args:
        state (CSRState): the attributes the pickle held.
        name (str): what to call the matrix in messages.

    Returns:
        scipy.sparse.csr_matrix: the matrix.
    """
    held = vars(state)
    if held.get("format", "csr") != "csr":
        raise RawDataError(f"{name}: a matrix of format {str(held.get('format'))[:20]!r}, not csr")
    missing = [k for k in ("data", "indices", "indptr") if k not in held]
    if missing or ("_shape" not in held and "shape" not in held):
        raise RawDataError(f"{name}: a CSR matrix without {', '.join(missing) or 'a shape'}")
    return check_csr(held["data"], held["indices"], held["indptr"], held.get("_shape", held.get("shape")),
                     name)


def adjacency_dict_edges(graph: object, num_nodes: int, name: str) -> np.ndarray:
    """The ``(2, E)`` int64 edges of a Planetoid ``graph`` file: node -> neighbour list.

    Rows come in the dict's order, each node's neighbours in list order (as PyG's
    ``edge_index_from_dict`` builds them). The loop is over the file's nodes, not its
    edges: the neighbour lists are joined by ``chain`` and read by numpy in one call.

    Args:
        graph (object): the unpickled ``graph`` file.
        num_nodes (int): ``N``.
        name (str): what to call the file in messages.

    Raises:
        RawDataError: not a dict of lists, a key or neighbour that is not an integer,
            or an id outside ``0..num_nodes-1`` (``ind.cora.graph names node -3;
            node ids are 0..2707``).
    """
    if not isinstance(graph, dict) or not all(isinstance(v, list) for v in graph.values()):
        raise RawDataError(f"{name} is not a dict of adjacency lists")
    lengths = np.fromiter((len(v) for v in graph.values()), dtype=np.int64, count=len(graph))
    keys = _ids(list(graph.keys()), "node", num_nodes, name)
    ids = [keys, _ids(list(chain.from_iterable(graph.values())), "neighbour", num_nodes, name)]
    rows, cols = np.repeat(ids[0], lengths), ids[1]
    for values in (rows, cols):
        out = (values < 0) | (values >= num_nodes)
        if out.any():
            raise RawDataError(f"{name} names node {int(values[np.argmax(out)])}; node ids are "
                               f"0..{num_nodes - 1}")
    return np.stack([rows, cols])


def _ids(values: list, what: str, num_nodes: int, name: str) -> np.ndarray:
    """``values`` as int64 in one numpy call; a float, a string, a nested list or an
    integer beyond int64 is refused (the generator below runs only to name it)."""
    if not values:
        return np.zeros(0, dtype=np.int64)
    try:
        ids = np.array(values)
    except (ValueError, TypeError, OverflowError):
        ids = np.array([], dtype=object)
    if ids.size != len(values) or ids.dtype.kind not in "iu" or \
            (ids.dtype.kind == "u" and ids.size and int(ids.max()) >= 2**63):
        bad = next((v for v in values if type(v) is not int), None)
        if bad is None:  # all Python ints: one is beyond int64
            bad = next(v for v in values if not -2**63 <= v < 2**63)
            raise RawDataError(f"{name} names node {str(bad)[:40]}; node ids are 0..{num_nodes - 1}")
        raise RawDataError(f"{name} holds the {what} {str(bad)[:40]!r}, not an integer node id")
    return ids.astype(np.int64)


def open_npz(path: Path, keys: tuple[str, ...]) -> dict[str, np.ndarray]:
    """The arrays ``keys`` of the ``.npz`` at ``path``, read without pickles, after
    checking that their uncompressed sizes fit the memory limit.

    A 1 MB ``.npz`` can inflate to gigabytes. ``zipfile`` never inflates a member past
    the ``file_size`` its header declares (it stops and reports a bad CRC), so summing
    the declared sizes bounds what reading can allocate.

    Args:
        path (Path): the ``.npz`` file.
        keys (tuple[str, ...]): the arrays to read.

    Returns:
        dict[str, np.ndarray]: the arrays by key.

    Raises:
        RawDataError: not a zip of ``.npy`` members, a missing key.
        MemoryLimitError: the declared sizes exceed ``DROPEDGE_MAX_MEMORY_GB``.
    """
    try:
        with zipfile.ZipFile(path) as archive:
            members = {info.filename.removesuffix(".npy"): info for info in archive.infolist()}
    except (zipfile.BadZipFile, OSError) as exc:
        raise RawDataError(f"{path.name} is not a .npz archive ({exc})") from None
    missing = [k for k in keys if k not in members]
    if missing:
        raise RawDataError(f"{path.name} lacks {', '.join(missing)}; is it the right file?")
    declared = sum(members[k].file_size for k in keys)
    limits.check(declared, f"{path.name} ({limits.human(declared)} uncompressed)", "is it the right file?")
    with np.load(path, allow_pickle=False) as f:  # arrays only, no pickles
        return {k: f[k] for k in keys}


# ----------------------------------------------------------------------------- the files


def _features(value, name: str) -> np.ndarray:
    """A Planetoid feature/label block as a dense float32 array: a pickled CSR matrix is
    checked (:func:`csr_from_state`) and its declared shape
    held against the memory limit before it is densified (it could name a billion columns)."""
    if isinstance(value, safe_pickle.CSRState):
        value = csr_from_state(value, name)
    elif not isinstance(value, np.ndarray) or value.ndim != 2:
        raise RawDataError(f"{name} holds {type(value).__name__}, not a 2-d matrix")
    rows, cols = (int(d) for d in value.shape)
    limits.check(rows * cols * 4, f"{name} ({rows} x {cols})", "is it a Planetoid raw file?")
    if isinstance(value, np.ndarray):
        return np.asarray(value, dtype=np.float32)
    return value.astype(np.float32).toarray()  # float32 before densifying: a float64 file is 4 B a cell too


def _dense_shape(value, name: str) -> tuple[int, int]:
    """The ``(rows, cols)`` a raw block declares (0 x 0 for what :func:`_features` refuses)."""
    if isinstance(value, safe_pickle.CSRState):
        held = vars(value)
        return _shape(held.get("_shape", held.get("shape")), name)
    return tuple(int(d) for d in value.shape) if isinstance(value, np.ndarray) and value.ndim == 2 else (0, 0)


def _check_planetoid_memory(raw: dict, prefix: str) -> None:
    """All six blocks dense, and the assembled features twice (``cat`` and the normalised
    copy), against the limit before any is densified: each block alone may pass it."""
    shapes = {k: _dense_shape(raw[k], f"ind.{prefix}.{k}") for k in ("x", "tx", "allx", "y", "ty", "ally")}
    for k, (r, c) in shapes.items():  # one block alone first: that message names the file
        limits.check(r * c * 4, f"ind.{prefix}.{k} ({r} x {c})", "is it a Planetoid raw file?")
    cells = sum(r * c for r, c in shapes.values())
    cells += 2 * (shapes["allx"][0] + shapes["tx"][0]) * shapes["allx"][1]
    limits.check(cells * 4, f"the dense arrays of ind.{prefix}.* ({cells} cells)",
                 "is it a Planetoid raw file?")


def _test_index(path: Path, low: int, rows: int) -> torch.Tensor:
    """``ind.<name>.test.index``: distinct integers, each in ``low..low+rows-1`` (the rows
    ``tx`` fills); the span is what CiteSeer's padding allocates, so it is checked first."""
    if path.stat().st_size > safe_pickle.MAX_BYTES:
        raise RawDataError(f"{path.name} is larger than {safe_pickle.MAX_BYTES >> 20} MB")
    text = path.read_bytes().split()
    if not text or not all(re.fullmatch(rb"[0-9]{1,18}", t) for t in text):
        raise RawDataError(f"{path.name} is not a list of node indices (integers >= 0)")
    index = torch.tensor([int(t) for t in text], dtype=torch.long)
    if index.unique().numel() != index.numel():
        raise RawDataError(f"{path.name} names a node twice")
    top = low + rows - 1
    if int(index.min()) < low or int(index.max()) > top:
        bad = int(index.min()) if int(index.min()) < low else int(index.max())
        raise RawDataError(f"{path.name} names node {bad}; the test nodes are {low}..{top}")
    return index


def read_planetoid(folder: Path, prefix: str) -> dict[str, torch.Tensor]:
    """The public Planetoid data of ``ind.<prefix>.*`` in ``folder``, read with the
    restricted unpickler (:mod:`dropedge_core._safe_pickle`: a crafted file runs nothing)
    and every array checked before use (:mod:`dropedge_core._raw_arrays`).

    Assembled as PyG's ``read_planetoid_data`` does (CiteSeer's featureless test
    indices padded with zero rows, the test rows put in index order). Returns ``x``,
    ``y``, ``edge_index``, the semi-supervised masks and ``num_allx`` (the full split's
    train+validation range).

    Args:
        folder (Path): the folder of the raw files.
        prefix (str): the dataset's prefix (``"cora"``, ``"citeseer"``, ``"pubmed"``).

    Returns:
        dict[str, Tensor]: the arrays named above.
    """
    pyg_utils = import_module("torch_geometric.utils")
    raw = {name: safe_pickle.load(folder / f"ind.{prefix}.{name}")
           for name in ("x", "tx", "allx", "y", "ty", "ally", "graph")}
    _check_planetoid_memory(raw, prefix)
    for name in ("x", "tx", "allx", "y", "ty", "ally"):
        raw[name] = torch.from_numpy(_features(raw[name], f"ind.{prefix}.{name}"))
    x, tx, allx, y, ty, ally = (raw[k] for k in ("x", "tx", "allx", "y", "ty", "ally"))
    for a, b in (("x", "y"), ("tx", "ty"), ("allx", "ally")):
        if raw[a].size(0) != raw[b].size(0):
            raise RawDataError(f"ind.{prefix}.{a} has {raw[a].size(0)} rows but ind.{prefix}.{b} has "
                               f"{raw[b].size(0)}")
    if not (x.size(1) == tx.size(1) == allx.size(1)) or not (y.size(1) == ty.size(1) == ally.size(1) >= 1):
        raise RawDataError(f"ind.{prefix}.x/tx/allx or y/ty/ally differ in width (or no classes)")
    # CiteSeer's test indices leave gaps (featureless nodes) that are padded with zero rows
    citeseer = prefix == "citeseer"
    test_index = _test_index(folder / f"ind.{prefix}.test.index", allx.size(0),
                             2**40 if citeseer else tx.size(0))
    if test_index.numel() != tx.size(0):
        raise RawDataError(f"ind.{prefix}.test.index names {test_index.numel()} nodes but "
                           f"ind.{prefix}.tx has {tx.size(0)} rows")
    sorted_test = test_index.sort()[0]
    if citeseer:
        span = int(test_index.max() - test_index.min()) + 1
        limits.check(span * (tx.size(1) + ty.size(1)) * 4,
                     f"ind.{prefix}.test.index (a span of {span} nodes)", "is it a Planetoid raw file?")
        tx_ext, ty_ext = tx.new_zeros(span, tx.size(1)), ty.new_zeros(span, ty.size(1))
        tx_ext[sorted_test - test_index.min()] = tx
        ty_ext[sorted_test - test_index.min()] = ty
        tx, ty = tx_ext, ty_ext
    features = torch.cat([allx, tx])
    features[test_index] = features[sorted_test]
    labels = torch.cat([ally, ty]).max(dim=1)[1]
    labels[test_index] = labels[sorted_test]
    n = labels.numel()
    if n < y.size(0) + 500:
        raise RawDataError(f"ind.{prefix}.* hold {n} nodes, fewer than the {y.size(0)} training and 500 "
                           f"validation nodes of the public split")
    edges = adjacency_dict_edges(raw["graph"], n, f"ind.{prefix}.graph")
    # as PyG's edge_index_from_dict: self-loops out, then coalesced (ids checked above)
    edge_index, _ = pyg_utils.remove_self_loops(torch.from_numpy(edges))
    edge_index = pyg_utils.coalesce(edge_index, num_nodes=n, sort_by_row=False)
    return {"x": features, "y": labels, "edge_index": edge_index,
            "train_mask": pyg_utils.index_to_mask(torch.arange(y.size(0)), n),
            "val_mask": pyg_utils.index_to_mask(torch.arange(y.size(0), y.size(0) + 500), n),
            "test_mask": pyg_utils.index_to_mask(test_index, n), "num_allx": allx.size(0)}


def read_npz(path: Path) -> dict:
    """A Coauthor/Amazon ``.npz`` as PyG's ``parse_npz`` reads it (binary features, the
    adjacency without self-loops, made undirected), every array checked first.

    Args:
        path (Path): the ``.npz`` file.

    Returns:
        dict: ``x``, ``edge_index`` and ``y``.
    """
    pyg_utils = import_module("torch_geometric.utils")
    f = open_npz(path, ("attr_data", "attr_indices", "attr_indptr", "attr_shape", "adj_data",
                                   "adj_indices", "adj_indptr", "adj_shape", "labels"))
    attr = check_csr(f["attr_data"], f["attr_indices"], f["attr_indptr"], f["attr_shape"],
                                f"{path.name} features")
    adj = check_csr(f["adj_data"], f["adj_indices"], f["adj_indptr"], f["adj_shape"],
                               f"{path.name} adjacency")
    n = attr.shape[0]
    labels = f["labels"]
    if adj.shape != (n, n) or labels.shape != (n,) or labels.dtype.kind not in "iu":
        raise RawDataError(f"{path.name}: {n} feature rows, an adjacency of shape {adj.shape} and labels "
                           f"of shape {labels.shape} ({labels.dtype}) do not describe one graph")
    if n == 0:  # the split, the largest component and max() of the labels need a node
        raise RawDataError(f"{path.name}: the graph has no nodes (features of shape {attr.shape})")
    if not 0 <= int(labels.min()) <= int(labels.max()) < MAX_CLASSES:
        raise RawDataError(f"{path.name}: labels {int(labels.min())}..{int(labels.max())} are not class "
                           f"ids 0..{MAX_CLASSES - 1}")
    # the dense features, the largest component's copy of them and the normalised copy
    limits.check(3 * n * attr.shape[1] * 4, f"{path.name} features ({n} x {attr.shape[1]})",
                 "is it the right file?")
    attr = attr.astype(np.float32)
    attr.data = np.where(attr.data > 0, np.float32(1), attr.data)  # PyG's x[x > 0] = 1, on the stored cells
    x = torch.from_numpy(attr.toarray())
    coo = adj.tocoo()
    edge_index = torch.stack([torch.from_numpy(coo.row).long(), torch.from_numpy(coo.col).long()])
    edge_index = pyg_utils.to_undirected(pyg_utils.remove_self_loops(edge_index)[0], num_nodes=n)
    return {"x": x, "y": torch.from_numpy(labels.astype(np.int64)), "edge_index": edge_index}


