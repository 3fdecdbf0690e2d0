"""Class-merging snapshots on disk: checked before a byte of their arrays is allocated.

A snapshot file is a compressed ``.npz`` of plain arrays (:func:`save_snapshots`; the app
ships some, made by ``bench/make_snapshots.py``). Before :func:`load_snapshots` reads one, it
reads only the archive's directory and each array's ``.npy`` header (:func:`array_headers`):
the names, shapes and dtypes must be those :func:`save_snapshots` writes and agree with each
other (``S`` samplers, ``K`` hidden layers, ``N`` nodes), and what the arrays would take once
decompressed must fit the memory limit (``$DROPEDGE_MAX_MEMORY_GB``). A header may claim any
shape (``(16, 8000, 2000)``: 3.2 GB) in a file of a few hundred bytes; numpy would allocate it
whole before reading. Anything else (an empty file, random bytes, settings that are not a
JSON object) is one :class:`SnapshotError` line naming the file.
"""
from __future__ import annotations

import json
import math
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from dropedge_core.echo import bounded

from dropedge_explorer import memory, paths

#: The bundled 16-layer Cora GCN (NoDrop / DropEdge / DropEdge++) the view opens with by default.
BUNDLED_SNAPSHOT = paths.SNAPSHOT_DIR / "cora_semi_gcn16.npz"
#: Each array of a snapshot file: its dims (letters shared across arrays must agree, digits
#: are fixed) and the dtype kinds allowed (numpy's ``dtype.kind``).
LAYOUT: dict[str, tuple[str, str]] = {
    "samplers": ("S", "U"), "labels": ("N", "iu"), "proj": ("SKN2", "f"),
    "silhouette": ("SK", "f"), "subspace": ("SK", "f"), "separation": ("SK", "f"),
    "test_acc": ("S", "f"), "final_test_acc": ("S", "f"), "epochs_run": ("S", "iu"),
    "between_kept": ("SK", "f"), "settings": ("", "U")}
#: Longest settings text read (JSON of a few dozen fields).
MAX_SETTINGS_CHARS = 100_000


class SnapshotError(ValueError):
    """A snapshot file that cannot be read, or a bad argument."""


@dataclass
class Snapshot:
    """One trained model's view: per hidden layer, 2-D coordinates and separation."""

    sampler: str
    proj: np.ndarray            # (K, N, 2) float32
    silhouette: list[float]     # K
    subspace: list[float]       # K, relative distance to the over-smoothing subspace
    separation: list[float]     # K, class separation (between-class share of the variance)
    test_acc: float | None      # at the best-validation epoch
    final_test_acc: float | None  # of the weights shown (the last epoch run)
    epochs_run: int
    between_kept: list[float]   # K, share of the between-class spread the 2-D axes hold


@dataclass
class Snapshots:
    """The views of one setting for several samplers, plus the labels and the settings."""

    labels: np.ndarray          # (N,) int, -1 = no label
    settings: dict
    items: list[Snapshot] = field(default_factory=list)

    @property
    def samplers(self) -> list[str]:
        return [s.sampler for s in self.items]

    @property
    def num_layers(self) -> int:
        """Hidden layers shown per model (the model's depth minus one)."""
        return int(self.items[0].proj.shape[0]) if self.items else 0


def save_snapshots(snaps: Snapshots, path: str | Path) -> Path:
    """Write ``snaps`` as a compressed ``.npz`` of plain arrays (coordinates as float16:
    a 2-D view needs no more, and it halves the file)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(
        path,
        samplers=np.array(snaps.samplers, dtype=str),
        labels=snaps.labels.astype(np.int16),
        proj=np.stack([s.proj for s in snaps.items]).astype(np.float16),
        silhouette=np.array([s.silhouette for s in snaps.items], dtype=np.float32),
        subspace=np.array([s.subspace for s in snaps.items], dtype=np.float32),
        separation=np.array([s.separation for s in snaps.items], dtype=np.float32),
        test_acc=np.array([np.nan if s.test_acc is None else s.test_acc for s in snaps.items]),
        final_test_acc=np.array([np.nan if s.final_test_acc is None else s.final_test_acc
                                 for s in snaps.items]),
        epochs_run=np.array([s.epochs_run for s in snaps.items], dtype=np.int64),
        between_kept=np.array([s.between_kept for s in snaps.items], dtype=np.float32),
        settings=np.array(json.dumps(snaps.settings, sort_keys=True)),
    )
    return path


def _opt(value: float) -> float | None:
    return None if np.isnan(value) else float(value)


def array_headers(path: Path) -> dict[str, tuple[tuple[int, ...], np.dtype]]:
    """Each array's shape and dtype in the ``.npz`` at ``path``, read from the archive's
    directory and the ``.npy`` headers only (no array data is decompressed).

    Raises:
        SnapshotError: not a ``.npz`` archive, a member that is not a ``.npy`` array, or
            a header numpy cannot read.
    """
    where = f"snapshot file {str(path)!r}"
    try:
        if not zipfile.is_zipfile(path):
            raise SnapshotError(f"{where} is not a .npz archive (empty, or not written by save_snapshots)")
        out = {}
        with zipfile.ZipFile(path) as archive:
            for info in archive.infolist():
                name = info.filename.removesuffix(".npy")
                if name == info.filename or name not in LAYOUT:
                    raise SnapshotError(f"{where} holds {bounded(info.filename)}, which is not one of "
                                        f"its arrays ({', '.join(LAYOUT)})")
                with archive.open(info) as fh:
                    version = np.lib.format.read_magic(fh)
                    read = (np.lib.format.read_array_header_1_0 if version == (1, 0)
                            else np.lib.format.read_array_header_2_0)
                    shape, _, dtype = read(fh)
                out[name] = (tuple(int(d) for d in shape), np.dtype(dtype))
    except SnapshotError:
        raise
    except (OSError, ValueError, EOFError, zipfile.BadZipFile, NotImplementedError) as exc:
        raise SnapshotError(f"cannot read {where}: {exc}".splitlines()[0][:300]) from None
    return out


def check_layout(headers: dict[str, tuple[tuple[int, ...], np.dtype]], where: str) -> int:
    """Check the arrays' names, dtypes and shapes against :data:`LAYOUT` (shared dims
    agree) and return the bytes they take once read (float16 coordinates become float32).

    Raises:
        SnapshotError: one line naming the array and what is wrong.
    """
    missing = [k for k in LAYOUT if k not in headers]
    if missing:
        raise SnapshotError(f"{where} lacks {', '.join(missing)}")
    dims: dict[str, tuple[int, str]] = {}
    for name, (letters, kinds) in LAYOUT.items():
        shape, dtype = headers[name]
        if dtype.kind not in kinds or dtype.hasobject:
            raise SnapshotError(f"{where}: {name} has dtype {dtype}, not one of kinds {kinds!r}")
        if len(shape) != len(letters):
            raise SnapshotError(f"{where}: {name} has shape {shape}, not {len(letters)}-dimensional")
        for letter, size in zip(letters, shape):
            expected = int(letter) if letter.isdigit() else dims.setdefault(letter, (size, name))[0]
            if size != expected:
                raise SnapshotError(f"{where}: {name} has shape {shape}, but {letter} = {expected} "
                                    f"(from {dims.get(letter, (0, 'the layout'))[1]})")
    if dims["S"][0] < 1 or dims["K"][0] < 1:
        raise SnapshotError(f"{where} holds no model (S = {dims['S'][0]}, K = {dims['K'][0]})")
    read = sum(math.prod(shape) * dtype.itemsize for shape, dtype in headers.values())
    return read + math.prod(headers["proj"][0]) * 4  # each model's coordinates as float32


def load_snapshots(path: str | Path = BUNDLED_SNAPSHOT) -> Snapshots:
    """Read a file written by :func:`save_snapshots` (never unpickles), after
    :func:`array_headers` and :func:`check_layout` and the memory limit passed.

    Raises:
        SnapshotError: a missing, empty or foreign file, arrays of another layout or
            above the memory limit, or settings that are not a JSON object.
    """
    path = Path(path)
    where = f"snapshot file {str(path)!r}"
    if not path.is_file():
        raise SnapshotError(f"cannot read {where}: no such file")
    needed = check_layout(array_headers(path), where)
    try:
        memory.check(needed, f"reading {where}")
    except memory.MemoryLimitError as exc:
        raise SnapshotError(str(exc)) from None
    try:
        with np.load(path, allow_pickle=False) as data:
            arrays = {k: data[k] for k in data.files}
    except (OSError, ValueError, EOFError, zipfile.BadZipFile) as exc:
        raise SnapshotError(f"cannot read {where}: {exc}".splitlines()[0][:300]) from None
    text = str(arrays["settings"])
    try:
        settings = json.loads(text) if len(text) <= MAX_SETTINGS_CHARS else None
    except ValueError:
        settings = None
    if not isinstance(settings, dict):
        raise SnapshotError(f"{where}: its settings are not a JSON object ({bounded(text)})")
    items = [Snapshot(str(name), arrays["proj"][i].astype(np.float32),
                      arrays["silhouette"][i].astype(float).tolist(),
                      arrays["subspace"][i].astype(float).tolist(),
                      arrays["separation"][i].astype(float).tolist(),
                      _opt(arrays["test_acc"][i]), _opt(arrays["final_test_acc"][i]),
                      int(arrays["epochs_run"][i]), arrays["between_kept"][i].astype(float).tolist())
             for i, name in enumerate(arrays["samplers"])]
    return Snapshots(arrays["labels"].astype(np.int64), settings, items)


