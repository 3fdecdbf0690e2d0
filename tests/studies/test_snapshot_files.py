"""Hostile snapshot files (issue 29, classes 2 and 6): refused in one line before any array
is allocated — an empty file, random bytes, a header claiming a (16, 8000, 2000) model in a
file of a few hundred bytes, arrays whose shapes disagree, settings that are not JSON."""
from __future__ import annotations

import io
import tracemalloc
import zipfile

import numpy as np
import pytest

from dropedge_explorer.studies import _snapshot_files as snapshot_files
from dropedge_explorer.studies import teaching


def _headers_only(path, shapes: dict[str, tuple[tuple[int, ...], str]], data: tuple[str, ...] = ()) -> None:
    """A ``.npz`` whose members are ``.npy`` headers with no data after them (but those
    named in ``data``: whole arrays of zeros)."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, (shape, descr) in shapes.items():
            buf = io.BytesIO()
            if name in data:
                np.lib.format.write_array(buf, np.zeros(shape, dtype=descr))
            else:
                header = {"descr": descr, "fortran_order": False, "shape": shape}
                np.lib.format.write_array_header_1_0(buf, header)
            archive.writestr(f"{name}.npy", buf.getvalue())


def _layout(s: int, k: int, n: int) -> dict:
    return {"samplers": ((s,), "<U10"), "labels": ((n,), "<i2"), "proj": ((s, k, n, 2), "<f2"),
            "silhouette": ((s, k), "<f4"), "subspace": ((s, k), "<f4"), "separation": ((s, k), "<f4"),
            "test_acc": ((s,), "<f8"), "final_test_acc": ((s,), "<f8"), "epochs_run": ((s,), "<i8"),
            "between_kept": ((s, k), "<f4"), "settings": ((), "<U20")}


def _small(path, settings: str = '{"num_layers": 3}', n: int = 5):
    np.savez_compressed(path, samplers=np.array(["nodrop"]), labels=np.zeros(n, np.int16),
                        proj=np.zeros((1, 2, n, 2), np.float16), silhouette=np.zeros((1, 2), np.float32),
                        subspace=np.zeros((1, 2), np.float32), separation=np.zeros((1, 2), np.float32),
                        test_acc=np.array([0.5]), final_test_acc=np.array([0.5]), epochs_run=np.array([3]),
                        between_kept=np.ones((1, 2), np.float32), settings=np.array(settings))


def test_a_well_formed_small_file_loads(tmp_path):
    _small(tmp_path / "ok.npz")
    snaps = teaching.load_snapshots(tmp_path / "ok.npz")
    assert snaps.samplers == ["nodrop"] and snaps.items[0].proj.shape == (2, 5, 2)
    assert snaps.settings == {"num_layers": 3}


@pytest.mark.parametrize("content, what", [(b"", "not a .npz archive"), (b"\x00\xff" * 64, "not a .npz"),
                                           (b"PK\x03\x04garbage", "not a .npz")])
def test_empty_or_random_files_are_one_line(tmp_path, content, what):
    (tmp_path / "bad.npz").write_bytes(content)
    with pytest.raises(teaching.SnapshotError, match=what) as info:
        teaching.load_snapshots(tmp_path / "bad.npz")
    assert "\n" not in str(info.value) and "bad.npz" in str(info.value)


def test_a_header_claiming_a_huge_model_is_refused_before_allocating(tmp_path, monkeypatch):
    monkeypatch.setenv("DROPEDGE_MAX_MEMORY_GB", "0.25")
    path = tmp_path / "huge.npz"
    shapes = _layout(16, 8000, 2000)  # proj (16, 8000, 2000, 2) float16: 1 GiB claimed, no data
    _headers_only(path, shapes, data=tuple(k for k in shapes if k != "proj"))
    assert path.stat().st_size < 64 * 1024
    tracemalloc.start()
    try:
        with pytest.raises(teaching.SnapshotError) as info:
            teaching.load_snapshots(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 16 * 2**20, peak  # numpy would allocate the claimed 1 GiB before finding no data
    assert "above the limit" in str(info.value) and "huge.npz" in str(info.value)


def test_shapes_that_disagree_name_the_array(tmp_path):
    shapes = _layout(3, 7, 2708)
    shapes["proj"] = ((3, 7, 2000, 2), "<f2")  # N differs from the labels'
    _headers_only(tmp_path / "x.npz", shapes)
    with pytest.raises(teaching.SnapshotError, match=r"proj has shape \(3, 7, 2000, 2\), but N = 2708"):
        teaching.load_snapshots(tmp_path / "x.npz")
    shapes = _layout(3, 7, 10)
    shapes["settings"] = ((), "|O")
    _headers_only(tmp_path / "o.npz", shapes)
    with pytest.raises(teaching.SnapshotError, match="settings has dtype object"):
        teaching.load_snapshots(tmp_path / "o.npz")


@pytest.mark.parametrize("settings", ["{not json", "[1, 2]", "x" * 5000])
def test_settings_that_are_not_a_json_object_are_one_bounded_line(tmp_path, settings):
    _small(tmp_path / "s.npz", settings=settings)
    with pytest.raises(teaching.SnapshotError, match="settings are not a JSON object") as info:
        teaching.load_snapshots(tmp_path / "s.npz")
    assert len(str(info.value)) < 300


def test_the_bundled_files_pass_the_header_checks():
    for path, _ in teaching.BUNDLED_VIEWS.values():
        headers = snapshot_files.array_headers(path)
        needed = snapshot_files.check_layout(headers, str(path))
        s, k, n, _two = headers["proj"][0]
        assert needed >= s * k * n * 2 * (2 + 4)  # float16 read + float32 copy
