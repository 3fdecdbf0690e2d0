"""``DROPEDGE_DATA`` and ``DROPEDGE_CACHE`` are read by the one location parser
(:func:`dropedge_explorer.locations.parse`, issue 29): ``~`` expanded; a name longer than the
filesystem allows, a NUL byte or a URL is one ``error:`` line naming the variable (exit 2),
never a traceback. Real CLI processes, as a user starts them."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from dropedge_core import datasets

from dropedge_explorer import env
from tests.helpers import REPO

LONG_NAME = "/tmp/" + "a" * 300  # one component of 300 bytes: NAME_MAX is 255 on ext4, tmpfs, overlayfs


def _cli(*argv: str, **environ: str) -> subprocess.CompletedProcess:
    environ = {**os.environ, "DROPEDGE_TORCH_THREADS": "1", **environ}
    return subprocess.run([sys.executable, "-m", "dropedge_core", *argv], cwd=REPO, capture_output=True,
                          text=True, timeout=300, env=environ)


def _one_error_line(proc: subprocess.CompletedProcess) -> str:
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), proc.stderr
    assert "Traceback" not in proc.stderr
    return lines[0]


@pytest.mark.parametrize("var", ["DROPEDGE_DATA", "DROPEDGE_CACHE"])
@pytest.mark.parametrize("command", [("men", "--dataset", "cora", "--layers", "2", "--runs", "1"),
                                     ("datasets",)])  # `datasets` reads the directories without the settings
def test_a_name_longer_than_the_filesystem_allows_is_one_line(var, command):
    line = _one_error_line(_cli(*command, **{var: LONG_NAME}))
    assert f"{var}: file path '/tmp/aaa" in line and "(305 characters)" in line
    assert "has a name longer than 255 bytes" in line and f"{var} must be a directory path" in line
    assert len(line) < 400  # the 305-character value is shown cut


@pytest.mark.parametrize("var", ["DROPEDGE_DATA", "DROPEDGE_CACHE"])
def test_a_url_is_refused_in_one_line(var):
    line = _one_error_line(_cli("men", "--dataset", "karate", "--layers", "2", "--runs", "1",
                                **{var: "https://example.org/planetoid"}))
    assert line == (f"error: {var} must be a directory path ('~' allowed), not a URL "
                    f"(got 'https://example.org/planetoid')")


def test_a_tilde_is_the_home_directory(tmp_path):
    (tmp_path / "raw_data").symlink_to(Path(os.environ["DROPEDGE_DATA"]).resolve())
    if not (tmp_path / "raw_data" / "Cora" / "raw").is_dir():
        pytest.skip("Cora not available offline (set DROPEDGE_DATA)")
    proc = _cli("men", "--dataset", "cora", "--sampler", "dropedge", "--layers", "2", "--runs", "1",
                "--json", "--no-progress", HOME=str(tmp_path), DROPEDGE_DATA="~/raw_data",
                DROPEDGE_CACHE="~/cache")
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "cache" / "Cora" / "raw" / "ind.cora.graph").is_file()  # copied into ~/cache
    assert not (REPO / "~").exists()


def test_the_parser_reads_both_variables_and_the_defaults_survive_them():
    assert env.directory("DROPEDGE_DATA", {"DROPEDGE_DATA": " "}) is None
    assert env.directory("DROPEDGE_CACHE", {"DROPEDGE_CACHE": "~/c"}) == Path.home() / "c"
    with pytest.raises(env.EnvError, match=r"DROPEDGE_CACHE: file path 'a\\x00b' contains a NUL"):
        env.directory("DROPEDGE_CACHE", {"DROPEDGE_CACHE": "a\x00b"})
    bad = {"DROPEDGE_DATA": LONG_NAME, "DROPEDGE_CACHE": "sqlite:///x", "DROPEDGE_TORCH_THREADS": "x"}
    with pytest.raises(env.EnvError) as info:  # every bad variable named at once
        env.settings(bad)
    assert all(name in str(info.value) for name in bad)
    assert env.settings_or_defaults(bad) == env.DEFAULTS  # module-level defaults never raise


def test_the_data_layer_refuses_the_same_way(monkeypatch):
    monkeypatch.setenv("DROPEDGE_DATA", LONG_NAME)
    with pytest.raises(datasets.DatasetError, match="DROPEDGE_DATA must be a directory path"):
        datasets.availability("cora")
    monkeypatch.setenv("DROPEDGE_DATA", "")
    monkeypatch.setenv("DROPEDGE_CACHE", LONG_NAME)
    with pytest.raises(datasets.DatasetError, match="DROPEDGE_CACHE must be a directory path"):
        datasets.check_cache()
