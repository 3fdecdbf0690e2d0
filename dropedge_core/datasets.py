"""Datasets and their splits (SPEC §1 "Datasets and splits").

``load(name, split=..., seed=...)`` returns a :class:`~dropedge_core.graph.Graph`.

Where the data come from:

* ``cora``, ``citeseer``, ``pubmed`` (PyG ``Planetoid``), ``coauthor-cs``,
  ``coauthor-physics`` (PyG ``Coauthor``), ``amazon-photo`` (PyG ``Amazon``): the raw
  files are read from ``$DROPEDGE_DATA/<Folder>/raw`` when that exists (PyG's raw layout;
  the directory may be read-only: files are copied into the writable cache
  ``$DROPEDGE_CACHE``, default ``~/.cache/dropedge_explorer``, and nothing is written
  into ``DROPEDGE_DATA``); else from the cache; else PyG downloads them.
  Offline and not cached: :class:`DatasetUnavailable` with a one-line message.
* ``karate`` (ships with PyG) and ``csbm`` (generated here) are built in.
"""
from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path

import torch

from .graph import Graph, GraphError, l1_normalize_rows, simple_undirected_edges


class DatasetError(ValueError):
    """A dataset name, split or file is not usable; the message says why in one line."""


class DatasetUnavailable(DatasetError):
    """A dataset is neither in ``DROPEDGE_DATA``, nor cached, nor downloadable now."""


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
BUILTIN: tuple[str, ...] = ("karate", "csbm")


def data_dir() -> Path | None:
    """``$DROPEDGE_DATA`` as a path, or ``None`` when unset or empty."""
    value = os.environ.get("DROPEDGE_DATA", "").strip()
    return Path(value).expanduser() if value else None


def cache_dir() -> Path:
    """The writable cache (``$DROPEDGE_CACHE``, default ``~/.cache/dropedge_explorer``)."""
    value = os.environ.get("DROPEDGE_CACHE", "").strip()
    return Path(value).expanduser() if value else Path.home() / ".cache" / "dropedge_explorer"


def check_name(name: str) -> str:
    """Normalise a dataset name; raise :class:`DatasetError` listing valid ones."""
    key = str(name).strip().lower()
    if key not in SOURCES:
        raise DatasetError(f"unknown dataset {name!r}; valid: {', '.join(NAMES)}")
    return key


def _raw_present(directory: Path, source: _Source) -> bool:
    return all((directory / source.folder / "raw" / f).is_file() for f in source.raw_files)


def availability(name: str) -> str:
    """Where ``name`` would load from now: ``"built-in"``, ``"DROPEDGE_DATA"``,
    ``"cached"`` or ``"download"`` (needs the internet)."""
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


def _stage_raw(source: _Source) -> Path:
    """Copy raw files from ``DROPEDGE_DATA`` into the cache (never write into the source)."""
    root = cache_dir()
    src = data_dir()
    target = root / source.folder / "raw"
    if src is not None and _raw_present(src, source):
        target.mkdir(parents=True, exist_ok=True)
        for f in source.raw_files:
            a, b = src / source.folder / "raw" / f, target / f
            if not b.exists() or b.stat().st_size != a.stat().st_size:
                shutil.copyfile(a, b)  # copyfile: no permission bits from a read-only source
    return root


def _load_pyg(key: str) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, object, Path]:
    source = SOURCES[key]
    if data_dir() is not None and not data_dir().is_dir():
        raise DatasetUnavailable(f"DROPEDGE_DATA={data_dir()} is not a readable directory")
    where = availability(key)
    root = _stage_raw(source)
    from torch_geometric import datasets as pyg_datasets

    cls = getattr(pyg_datasets, source.pyg_class)
    try:
        ds = cls(str(root), source.pyg_name)
    except (OSError, ConnectionError) as exc:  # urllib's URLError is an OSError
        if where == "download":
            raise DatasetUnavailable(
                f"{key} is not available offline: set DROPEDGE_DATA to a directory with PyG's "
                f"raw layout (<dir>/{source.folder}/raw/{source.raw_files[0]} ...) or connect to "
                f"the internet so PyG can download it ({type(exc).__name__})") from None
        raise DatasetError(f"cannot read {key} raw files ({where}): {exc}") from None
    except Exception as exc:  # corrupt or truncated raw files: pickle/numpy errors vary
        raise DatasetError(
            f"cannot read {key} raw files ({where}, in {root / source.folder}): "
            f"{type(exc).__name__}: {str(exc)[:120]}") from None
    data = ds[0]
    return data.x, data.y, data.edge_index, data, root


def per_class_split(y: torch.Tensor, train_per_class: int, val_per_class: int,
                    generator: torch.Generator) -> tuple[torch.Tensor, ...]:
    """Random ``train_per_class`` / ``val_per_class`` nodes per class; the rest is test.

    Nodes with ``y < 0`` (unlabelled) are in no split. Vectorised: one random
    permutation, a stable sort by class, the rank of each node inside its class.
    """
    n = y.numel()
    perm = torch.randperm(n, generator=generator)
    labels = y[perm]
    order = torch.argsort(labels, stable=True)
    nodes, classes = perm[order], labels[order]
    first = torch.searchsorted(classes, classes, right=False)  # first slot of each class
    rank = torch.arange(n) - first
    labelled = classes >= 0
    train = torch.zeros(n, dtype=torch.bool)
    val = torch.zeros(n, dtype=torch.bool)
    test = torch.zeros(n, dtype=torch.bool)
    train[nodes[labelled & (rank < train_per_class)]] = True
    val[nodes[labelled & (rank >= train_per_class) & (rank < train_per_class + val_per_class)]] = True
    test[nodes[labelled & (rank >= train_per_class + val_per_class)]] = True
    return train, val, test


def _planetoid(key: str, split: str) -> Graph:
    x, y, edge_index, data, root = _load_pyg(key)
    n = x.size(0)
    if split == "semi":
        train, val, test = data.train_mask, data.val_mask, data.test_mask
    else:
        from torch_geometric.io.planetoid import read_file

        source = SOURCES[key]
        n_ally = read_file(str(root / source.folder / "raw"), key, "allx").shape[0]
        idx = torch.arange(n)
        train = idx < n_ally - 500
        val = (idx >= n_ally - 500) & (idx < n_ally)
        test = data.test_mask.clone()
    # CiteSeer's 15 test indices without features are zero rows PyG pads in: they stay
    # in the graph, in no split (PyG's masks already leave them out).
    return Graph(key, l1_normalize_rows(x), y.long(), simple_undirected_edges(edge_index, n),
                 train.clone(), val.clone(), test.clone(), int(y.max()) + 1,
                 {"source": availability(key), "split": split})


def _largest_component(x, y, edge_index):
    from torch_geometric.data import Data
    from torch_geometric.transforms import LargestConnectedComponents

    data = LargestConnectedComponents()(Data(x=x, y=y, edge_index=edge_index))
    return data.x, data.y, data.edge_index


def _coauthor_amazon(key: str, seed: int) -> Graph:
    x, y, edge_index, _, _ = _load_pyg(key)
    x, y, edge_index = _largest_component(x, y, edge_index)
    g = torch.Generator().manual_seed(seed)
    train, val, test = per_class_split(y, 20, 30, g)
    return Graph(key, l1_normalize_rows(x), y.long(),
                 simple_undirected_edges(edge_index, x.size(0)), train, val, test,
                 int(y.max()) + 1, {"source": availability(key), "split": f"20/30 per class, seed {seed}"})


def karate(seed: int = 0) -> Graph:
    """Zachary's karate club (PyG ``KarateClub``): 34 nodes, 78 edges, 4 classes.

    Features are one-hot node ids (so every feature kernel is flat); split 2 / 2 per
    class, the rest test.
    """
    from torch_geometric.datasets import KarateClub

    data = KarateClub()[0]
    train, val, test = per_class_split(data.y, 2, 2, torch.Generator().manual_seed(seed))
    return Graph("karate", l1_normalize_rows(data.x), data.y.long(),
                 simple_undirected_edges(data.edge_index, data.num_nodes), train, val, test,
                 int(data.y.max()) + 1, {"source": "built-in", "split": f"2/2 per class, seed {seed}"})


def csbm(num_nodes: int = 600, num_classes: int = 3, p_intra: float = 0.03,
         p_inter: float = 0.004, num_features: int = 60, feature_signal: float = 0.5,
         seed: int = 0) -> Graph:
    """A contextual stochastic block model, generated locally.

    Nodes get balanced random classes; an edge joins two nodes with probability
    ``p_intra`` inside a class and ``p_inter`` across. Features are a bag of words: every
    feature is on with probability 0.05, and the ``num_features / num_classes`` features
    of a node's own class with probability ``0.05 + 0.3 * feature_signal`` — so feature
    similarity carries class signal and the feature-dependent sampler (FD) has something
    to find. Split: 20 / 30 per class, the rest test.

    Edges are drawn per class pair (a binomial count, then uniform pairs): no
    ``N x N`` matrix, so 50k nodes are fine.
    """
    for pname, p in (("p_intra", p_intra), ("p_inter", p_inter), ("feature_signal", feature_signal)):
        if not 0.0 <= p <= 1.0:
            raise DatasetError(f"csbm {pname} must be in [0, 1] (got {p})")
    if num_nodes < 2 * num_classes or num_classes < 1 or num_features < num_classes:
        raise DatasetError(f"csbm needs num_nodes >= 2*num_classes and num_features >= num_classes "
                           f"(got {num_nodes}, {num_classes}, {num_features})")
    g = torch.Generator().manual_seed(seed)
    y = torch.arange(num_nodes) % num_classes
    y = y[torch.randperm(num_nodes, generator=g)]
    members = [torch.nonzero(y == c).flatten() for c in range(num_classes)]
    pieces = []
    for a in range(num_classes):  # a loop over class pairs, not over nodes or edges
        for b in range(a, num_classes):
            na, nb = members[a].numel(), members[b].numel()
            pairs = na * (na - 1) / 2 if a == b else na * nb
            p = p_intra if a == b else p_inter
            count = int(torch.binomial(torch.tensor(float(pairs)), torch.tensor(p), generator=g))
            u = members[a][torch.randint(na, (count,), generator=g)]
            v = members[b][torch.randint(nb, (count,), generator=g)]
            pieces.append(torch.stack([u, v]))
    edges = simple_undirected_edges(torch.cat(pieces, dim=1), num_nodes)
    block = torch.arange(num_features) * num_classes // num_features  # class owning a feature
    prob = torch.full((num_nodes, num_features), 0.05)
    prob[block.unsqueeze(0) == y.unsqueeze(1)] += 0.3 * feature_signal
    x = torch.bernoulli(prob, generator=g)
    train, val, test = per_class_split(y, 20, 30, g)
    return Graph("csbm", l1_normalize_rows(x), y, edges, train, val, test, num_classes,
                 {"source": "built-in", "split": f"20/30 per class, seed {seed}",
                  "params": dict(num_nodes=num_nodes, num_classes=num_classes, p_intra=p_intra,
                                 p_inter=p_inter, num_features=num_features,
                                 feature_signal=feature_signal, seed=seed)})


def load(name: str, split: str | None = None, seed: int = 0, **params) -> Graph:
    """Load a dataset as a :class:`Graph`.

    Args:
        name: one of :data:`NAMES`.
        split: ``"semi"`` (public Planetoid split, the default) or ``"full"`` for the
            citation graphs; the other datasets have one split rule (``"per-class"``,
            the default) drawn from ``seed``.
        seed: seed of random splits (and of the ``csbm`` graph itself).
        **params: generator parameters, ``csbm`` only (see :func:`csbm`).

    Raises:
        DatasetError: unknown name/split, unreadable files (one-line message).
        DatasetUnavailable: offline and neither in ``DROPEDGE_DATA`` nor cached.
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
