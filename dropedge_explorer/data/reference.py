"""The paper's reported numbers (``dropedge_explorer/assets/reference/*.csv``), as DataFrames.

These are facts from "Structure-Aware DropEdge Towards Deep Graph Convolutional
Networks" (DropEdge++): the MEN table of the appendix and the accuracy-by-depth
tables. Each loader adds ``dataset_key`` (our dataset name, e.g. ``"citeseer"`` for
the paper's "Citeseer") and lower-cases sampler names, so rows join with measured ones.
"""
from __future__ import annotations

from pathlib import Path

import pandas as pd

from dropedge_explorer import paths

__all__ = [
    "FULL_GRAPH", "REFERENCE_DIR", "PAPER_DATASET_NAMES", "dataset_key", "paper_men",
    "paper_accuracy_by_depth", "paper_epoch_time", "paper_best_accuracy",
]

#: The row of the unsampled graph in tables beside the samplers' rows (the theory views'
#: ``λ`` and subspace decay), so that studies and figures spell it alike.
FULL_GRAPH = "full graph"

#: ``dropedge_explorer/assets/reference`` of the repository.
REFERENCE_DIR = paths.REFERENCE_DIR


#: The paper's dataset names (as its tables spell them) -> our dataset keys
#: (:data:`dropedge_core.datasets.NAMES`); the one map, used by every table reader
#: here and by :mod:`dropedge_explorer.data.presets`.
PAPER_DATASET_NAMES: dict[str, str] = {
    "Cora": "cora", "Citeseer": "citeseer", "CiteSeer": "citeseer", "Pubmed": "pubmed",
    "PubMed": "pubmed", "Coauthor CS": "coauthor-cs", "Coauthor Physics": "coauthor-physics",
    "Amazon Photos": "amazon-photo", "Amazon Photo": "amazon-photo",
}


def dataset_key(paper_name: str) -> str:
    """Our dataset key for a paper dataset name: ``"Coauthor CS"`` -> ``"coauthor-cs"``,
    ``"Amazon Photos"`` -> ``"amazon-photo"`` (:data:`PAPER_DATASET_NAMES`); a name not
    in the map is lower-cased with ``-`` for spaces.

    Args:
        paper_name (str): a dataset's name as the paper writes it.

    Returns:
        str: our key.

    Example:
        >>> dataset_key("Coauthor CS"), dataset_key("Some Graph")
        ('coauthor-cs', 'some-graph')
    """
    name = str(paper_name).strip()
    return PAPER_DATASET_NAMES.get(name, name.lower().replace(" ", "-"))


def _read(name: str, directory: Path | None = None) -> pd.DataFrame:
    path = (directory or REFERENCE_DIR) / name
    if not path.is_file():
        raise FileNotFoundError(f"paper reference table {path} is missing")
    df = pd.read_csv(path)
    if "dataset" in df:
        df["dataset_key"] = df["dataset"].map(dataset_key)
    if "sampler" in df:
        df["sampler"] = df["sampler"].str.strip().str.lower()
    return df


def paper_men(directory: Path | None = None) -> pd.DataFrame:
    """The paper's MEN table (appendix, 10 runs, ``p_min = 0.05``, ``p_max = 1.0``):
    columns ``dataset, sampler, layers, men, dataset_key``.

    Args:
        directory (Path, optional): where the tables are. (default: :obj:`None`: the bundled
            assets)

    Returns:
        pd.DataFrame: the table.
    """
    return _read("paper_men.csv", directory)


def paper_accuracy_by_depth(directory: Path | None = None) -> pd.DataFrame:
    """The paper's test accuracy (%) by depth: ``setting, dataset, backbone, sampler,
    layers, test_accuracy, dataset_key``.

    Args:
        directory (Path, optional): where the tables are. (default: :obj:`None`: the bundled
            assets)

    Returns:
        pd.DataFrame: the table.
    """
    return _read("paper_accuracy_by_depth.csv", directory)


def paper_epoch_time(directory: Path | None = None) -> pd.DataFrame:
    """The paper's time per epoch on Cora (seconds; its timing table): ``phase``
    (sampling / training / total) × ``nodrop_s, dropedge_s, dropedge_plus_plus_s``.

    Args:
        directory (Path, optional): where the tables are. (default: :obj:`None`: the bundled
            assets)

    Returns:
        pd.DataFrame: the table.
    """
    return _read("paper_epoch_time.csv", directory)


def paper_best_accuracy(directory: Path | None = None) -> pd.DataFrame:
    """The paper's best test accuracy (%) per backbone with DropEdge++ (its SOTA
    tables): ``setting, dataset, backbone, test_accuracy, std, layers, dataset_key``.

    Args:
        directory (Path, optional): where the tables are. (default: :obj:`None`: the bundled
            assets)

    Returns:
        pd.DataFrame: the table.
    """
    return _read("paper_best_accuracy.csv", directory)
