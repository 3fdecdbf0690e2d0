"""Copies of the raw datasets and the crafted values put into them."""
from __future__ import annotations

import pickle
from pathlib import Path

import scipy.sparse as sp
from dropedge_core import _raw_arrays as raw_arrays
from dropedge_core import _safe_pickle as safe_pickle

from tests.helpers import raw_dir

FOLDER = {"cora": "Cora", "citeseer": "CiteSeer"}


def copy_raw(tmp_path: Path, name: str = "cora") -> Path:
    src = tmp_path / "data"
    raw = src / FOLDER[name] / "raw"
    raw.mkdir(parents=True)
    for f in raw_dir(name).iterdir():
        (raw / f.name).write_bytes(f.read_bytes())
    return src


def raw_value(src: Path, name: str):
    """A real raw file's content: a CSR matrix, an array or the graph dict."""
    value = safe_pickle.load(src / "Cora" / "raw" / name)
    return raw_arrays.csr_from_state(value, name) if isinstance(value, safe_pickle.CSRState) else value


def _index(m, position, value):
    idx = m.indices.copy()
    idx[position] = value
    return crafted_csr(m, indices=idx)


def crafted_csr(matrix: sp.csr_matrix, **attrs) -> bytes:
    """``matrix`` pickled with some attributes replaced: setattr skips scipy's checks, as
    a file written by hand does."""
    matrix = matrix.copy()
    for key, value in attrs.items():
        setattr(matrix, key, value)
    return pickle.dumps(matrix, protocol=2)
