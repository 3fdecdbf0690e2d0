"""Datasets and their splits.

``load(name, split=..., seed=...)`` returns a :class:`~dropedge_core.graph.Graph`.

Where the data come from:

* ``cora``, ``citeseer``, ``pubmed`` (PyG's ``Planetoid`` files), ``coauthor-cs``,
  ``coauthor-physics`` (``Coauthor``), ``amazon-photo`` (``Amazon``): the raw files are
  taken from ``$DROPEDGE_DATA/<Folder>/raw`` when that exists (PyG's raw layout; the
  directory may be read-only: files are copied into the writable cache
  ``$DROPEDGE_CACHE``, default ``~/.cache/dropedge_explorer``, refreshed whenever their
  SHA-256 differs, and nothing is written into ``DROPEDGE_DATA``); else from the cache;
  else they are downloaded from PyG's URLs into the cache. Offline and not cached:
  :class:`DatasetUnavailable` with a one-line message.
* The raw files are read here, never through PyG's dataset classes: the Planetoid
  files are pickles, read with the restricted unpickler of
  :mod:`dropedge_core._safe_pickle` (a crafted file is a one-line error and runs
  nothing); the ``.npz`` files with ``np.load`` (no pickles, their uncompressed sizes
  checked first); every array is checked by :mod:`dropedge_core._raw_arrays`
  (index ranges, ``indptr``, node ids, shapes) before scipy or torch touches it; no
  processed ``data.pt`` (a pickle PyG may load unrestricted) is written or read.
* ``karate`` (ships with PyG) and ``csbm`` (generated here) are built in.
"""
from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from dataclasses import dataclass
from importlib import import_module
from pathlib import Path

import torch

from dropedge_core import _raw_arrays as raw_arrays
from dropedge_core import _safe_pickle as safe_pickle
from dropedge_core import files, limits
from dropedge_core._errors import DatasetError, DatasetUnavailable
from dropedge_core._raw_arrays import read_npz, read_planetoid
from dropedge_core._splits import per_class_split
from dropedge_core._synthetic import csbm, karate
from dropedge_core.graph import Graph, GraphError, l1_normalize_rows, simple_undirected_edges

__all__ = [
    "DatasetError", "DatasetUnavailable", "SOURCES", "NAMES", "data_dir", "cache_dir", "check_name",
    "availability", "available", "data_dir_problem", "check_cache", "per_class_split", "karate", "csbm",
    "load",
]


@dataclass(frozen=True)
class _Source:
    pyg_class: str  # "Planetoid" | "Coauthor" | "Amazon" | "builtin"
    pyg_name: str  # the name PyG's class takes
    folder: str  # the folder under DROPEDGE_DATA / the cache
    raw_files: tuple[str, ...]
    splits: tuple[str, ...]


_PLANETOID_RAW = ("x", "tx", "allx", "y", "ty", "ally", "graph", "test.index")

SOURCES: dict[str, _Source] = {
    "cora": _Source("Planetoid", "Cora", "Cora",
                    tuple(f"ind.cora.{s}" for s in _PLANETOID_RAW), ("semi", "full")),
    "citeseer": _Source("Planetoid", "CiteSeer", "CiteSeer",
                        tuple(f"ind.citeseer.{s}" for s in _PLANETOID_RAW), ("semi", "full")),
    "pubmed": _Source("Planetoid", "PubMed", "PubMed",
                      tuple(f"ind.pubmed.{s}" for s in _PLANETOID_RAW), ("semi", "full")),
    "coauthor-cs": _Source("Coauthor", "CS", "CS", ("ms_academic_cs.npz",), ("per-class",)),
    "coauthor-physics": _Source("Coauthor", "Physics", "Physics",
                                ("ms_academic_phy.npz",), ("per-class",)),
    "amazon-photo": _Source("Amazon", "Photo", "Photo",
                            ("amazon_electronics_photo.npz",), ("per-class",)),
    "karate": _Source("builtin", "KarateClub", "", (), ("per-class",)),
    "csbm": _Source("builtin", "csbm", "", (), ("per-class",)),
}
NAMES: tuple[str, ...] = tuple(SOURCES)
# where a loaded graph's files came from, as :func:`availability` names it
_SOURCE_NAMES = {"DROPEDGE_DATA": "DROPEDGE_DATA", "cached": "cached", "download": "cached"}


def _directory(name: str) -> Path | None:
    try:
        return files.directory(name)
    except files.PathError as exc:
        raise DatasetError(str(exc)) from None


def data_dir() -> Path | None:
    """``$DROPEDGE_DATA`` as a path (:func:`dropedge_core.files.directory`: ``~`` expanded), or
    ``None`` when unset or empty.

    Raises:
        DatasetError: a URL or a path the filesystem cannot hold (one line).
    """
    return _directory("DROPEDGE_DATA")


def cache_dir() -> Path:
    """The writable cache (``$DROPEDGE_CACHE``, default ``~/.cache/dropedge_explorer``).

    Raises:
        DatasetError: a URL or a path the filesystem cannot hold (one line).
    """
    return _directory("DROPEDGE_CACHE") or Path.home() / ".cache" / "dropedge_explorer"


def check_name(name: str) -> str:
    """Normalise a dataset name; raise :class:`DatasetError` listing valid ones.

    Args:
        name (str): a dataset name, in any case.

    Returns:
        str: a key of :data:`SOURCES`.

    Example:
        >>> check_name(" Cora ")
        'cora'
    """
    key = str(name).strip().lower()
    if key not in SOURCES:
        raise DatasetError(f"unknown dataset {name!r}; valid: {', '.join(NAMES)}")
    return key


def _raw_present(directory: Path, source: _Source) -> bool:
    return all((directory / source.folder / "raw" / f).is_file() for f in source.raw_files)


def availability(name: str) -> str:
    """Where ``name`` would load from now: ``"built-in"``, ``"DROPEDGE_DATA"``, ``"cached"``
    or ``"download"`` (needs the internet).

    Args:
        name (str): one of :data:`NAMES`.

    Returns:
        str: one of the four words above.

    Example:
        >>> availability("karate")
        'built-in'
    """
    source = SOURCES[check_name(name)]
    if source.pyg_class == "builtin":
        return "built-in"
    src = data_dir()
    if src is not None and _raw_present(src, source):
        return "DROPEDGE_DATA"
    if _raw_present(cache_dir(), source):
        return "cached"
    return "download"


def available() -> list[dict]:
    """One row per dataset: ``name``, ``availability``, ``offline`` (bool), ``splits``."""
    rows = []
    for name, source in SOURCES.items():
        where = availability(name)
        rows.append({"name": name, "availability": where, "offline": where != "download",
                     "splits": ", ".join(source.splits)})
    return rows


def data_dir_problem() -> str | None:
    """A one-line warning when ``DROPEDGE_DATA`` is set but is not a readable directory
    (then every file-backed dataset needs a download or the cache), else ``None``."""
    src = data_dir()
    if src is None:
        return None
    try:
        if src.is_dir() and os.access(src, os.R_OK | os.X_OK):
            return None
        what = "a file" if src.is_file() else ("missing" if not os.path.lexists(src) else "not a directory")
    except OSError as exc:  # a symlink loop, a name too long, ...
        what = exc.strerror or type(exc).__name__
    return f"DROPEDGE_DATA={src} is not a readable directory ({what})"


def check_cache() -> Path:
    """The cache directory, created if missing and checked writable.

    Raises:
        DatasetError: one line naming ``DROPEDGE_CACHE`` when it is a file, a symlink
            loop, read-only or cannot be created.
    """
    root = cache_dir()
    try:
        root.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=root):  # the only sure test of writability (root, EROFS)
            pass
    except OSError as exc:
        what = "it is a file" if root.is_file() else (exc.strerror or type(exc).__name__)
        raise DatasetError(f"DROPEDGE_CACHE={root} is not a writable directory ({what}); set "
                           f"DROPEDGE_CACHE to a directory this program may write") from None
    return root


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _stage_raw(key: str, source: _Source) -> tuple[Path, str]:
    """The directory to read ``key``'s raw files from, and where they came from.

    Files in ``DROPEDGE_DATA`` are copied into the cache (never written into the source)
    and copied again whenever a cached copy's content (SHA-256) differs from the
    source's, so a source repaired in place is picked up. Without ``DROPEDGE_DATA``,
    the cache's copies are used; without those, PyG's download URL fills the cache.
    """
    src = data_dir()
    root = check_cache()
    target = root / source.folder / "raw"
    try:
        if src is not None and _raw_present(src, source):
            target.mkdir(parents=True, exist_ok=True)
            for f in source.raw_files:
                a, b = src / source.folder / "raw" / f, target / f
                if not b.is_file() or _sha256(a) != _sha256(b):
                    with files.replaced(b) as part:  # a name of this process: others stage at once
                        shutil.copyfile(a, part)  # copyfile: no permission bits from a read-only source
            return target, "DROPEDGE_DATA"
        if _raw_present(root, source):
            return target, "cached"
        target.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise DatasetError(f"cannot copy {key} raw files into the cache {target}: "
                           f"{exc.strerror or exc}") from None
    _download(key, source, target)
    return target, "download"


def _download(key: str, source: _Source, target: Path) -> None:
    """Fetch the raw files from PyG's URLs into ``target`` (quietly: no PyG log lines)."""
    download_url = import_module("torch_geometric.data").download_url
    base = getattr(import_module("torch_geometric.datasets"), source.pyg_class).url.rstrip("/")
    try:
        for f in source.raw_files:
            if not (target / f).is_file():
                with files.replaced(target / f) as part:
                    download_url(f"{base}/{f}", str(target), log=False, filename=part.name)
    except OSError as exc:  # urllib's URLError is an OSError; ConnectionError too
        raise DatasetUnavailable(
            f"{key} is not available offline: set DROPEDGE_DATA to a directory with PyG's "
            f"raw layout (<dir>/{source.folder}/raw/{source.raw_files[0]} ...) or connect to "
            f"the internet so PyG can download it ({type(exc).__name__})") from None


def _load_raw(key: str) -> tuple[dict, str]:
    """Read ``key``'s raw files (never PyG's processed ``data.pt``, which is a pickle PyG
    may load unrestricted); every failure is one line naming the directory read."""
    source = SOURCES[key]
    problem = data_dir_problem()
    if problem is not None and not data_dir().is_dir():
        raise DatasetUnavailable(problem)
    folder, where = _stage_raw(key, source)
    place = f"the cache {folder}" + (f", copied from DROPEDGE_DATA={data_dir()}" if where == "DROPEDGE_DATA"
                                     else "")
    try:
        if source.pyg_class == "Planetoid":
            return read_planetoid(folder, key), where
        return read_npz(folder / source.raw_files[0]), where
    except (safe_pickle.UnsafePickleError, raw_arrays.RawDataError, DatasetError,
            limits.MemoryLimitError) as exc:
        raise DatasetError(f"cannot read {key} raw files in {place}: {exc}") from None
    except Exception as exc:  # corrupt or truncated files: numpy/zip errors vary
        raise DatasetError(
            f"cannot read {key} raw files in {place}: {type(exc).__name__}: "
            f"{' '.join(str(exc).split())[:120]}") from None


def _planetoid(key: str, split: str) -> Graph:
    data, where = _load_raw(key)
    x, y, n = data["x"], data["y"], data["x"].size(0)
    if split == "semi":
        train, val, test = data["train_mask"], data["val_mask"], data["test_mask"]
    else:
        idx = torch.arange(n)
        train = idx < data["num_allx"] - 500
        val = (idx >= data["num_allx"] - 500) & (idx < data["num_allx"])
        test = data["test_mask"].clone()
    # CiteSeer's 15 test indices without features are zero rows padded in: they stay
    # in the graph, in no split (the semi masks already leave them out).
    return Graph(key, l1_normalize_rows(x), y.long(), simple_undirected_edges(data["edge_index"], n),
                 train.clone(), val.clone(), test.clone(), int(y.max()) + 1,
                 {"source": _SOURCE_NAMES[where], "split": split})


def _largest_component(x, y, edge_index):
    lcc = import_module("torch_geometric.transforms").LargestConnectedComponents()
    data = lcc(import_module("torch_geometric.data").Data(x=x, y=y, edge_index=edge_index))
    return data.x, data.y, data.edge_index


def _coauthor_amazon(key: str, seed: int) -> Graph:
    data, where = _load_raw(key)
    x, y, edge_index = data["x"], data["y"], data["edge_index"]
    x, y, edge_index = _largest_component(x, y, edge_index)
    g = torch.Generator().manual_seed(seed)
    train, val, test = per_class_split(y, 20, 30, g)
    return Graph(key, l1_normalize_rows(x), y.long(),
                 simple_undirected_edges(edge_index, x.size(0)), train, val, test,
                 int(y.max()) + 1, {"source": _SOURCE_NAMES[where], "split": f"20/30 per class, seed {seed}"})


def load(name: str, split: str | None = None, seed: int = 0, **params) -> Graph:
    """Load a dataset as a :class:`Graph`.

    Args:
        name (str): one of :data:`NAMES` (case and blanks ignored).
        split (str, optional): ``"semi"`` (public Planetoid split) or ``"full"`` for the
            citation graphs; the other datasets have one split rule (``"per-class"``)
            drawn from ``seed``. (default: :obj:`None`: the dataset's first split,
            ``"semi"`` or ``"per-class"``)
        seed (int, optional): seed of random splits (and of the ``csbm`` graph itself).
            (default: :obj:`0`)
        **params (optional): generator parameters, ``csbm`` only (see :func:`csbm`).

    Returns:
        Graph: the graph, features row-L1-normalised, with its split masks.

    Raises:
        DatasetError: unknown name/split, unreadable files (one-line message).
        DatasetUnavailable: offline and neither in ``DROPEDGE_DATA`` nor cached.

    Example:
        >>> g = load("karate")  # built in: no file, no download
        >>> g.num_nodes, g.num_edges, g.num_classes
        (34, 78, 4)
        >>> [int(m.sum()) for m in (g.train_mask, g.val_mask, g.test_mask)]  # 2 / 2 per class
        [8, 8, 18]
        >>> load("csbm", num_nodes=60, num_classes=2).num_nodes
        60
    """
    key = check_name(name)
    source = SOURCES[key]
    split = source.splits[0] if split is None else str(split).lower()
    if split not in source.splits:
        raise DatasetError(f"unknown split {split!r} for {key}; valid: {', '.join(source.splits)}")
    if params and key != "csbm":
        raise DatasetError(f"{key} takes no generator parameters (got {sorted(params)})")
    if key == "csbm":
        graph = csbm(seed=seed, **params)
    elif key == "karate":
        graph = karate(seed)
    elif source.pyg_class == "Planetoid":
        graph = _planetoid(key, split)
    else:
        graph = _coauthor_amazon(key, seed)
    if graph.num_edges == 0:
        raise GraphError(f"{key} has no edges")
    return graph
