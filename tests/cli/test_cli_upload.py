"""Your own graph from the command line: ``--edges PATH [--features PATH] [--labels PATH]``
on ``men``, ``train`` and ``tune``; repairs as ``note:`` lines on stderr, an unusable file
as exit 2 with one ``error:`` line, a pickle never unpickled; ``TrainConfig(dataset="upload")``."""
from __future__ import annotations

import json
import os
import pickle

import pytest

from dropedge_explorer.data import csv_graph
from dropedge_explorer.training import ConfigError, TrainConfig, train
from tests.helpers.app import sbm_csv
from tests.helpers.runs import run_cli, run_module

FAST = ["--hidden", "8", "--epochs", "5", "--diag-every", "0", "--no-progress", "--threads", "1"]


@pytest.fixture
def files(tmp_path):
    """``{role: path}`` of a small two-class graph's CSV files."""
    out = {}
    for role, content in sbm_csv().items():
        out[role] = tmp_path / f"my_{role}.csv"
        out[role].write_bytes(content)
    return out


def _one_error_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    assert "Traceback" not in err
    return lines[0]


def test_men_on_an_uploaded_edge_list(capsys, files):
    code, out, err = run_cli(capsys, "men", "--edges", str(files["edges"]), "--sampler", "lid", "ldd",
                             "--layers", "2", "4", "--runs", "2", "--json", "--no-progress")
    assert code == 0, err
    data = json.loads(out)  # stdout stays JSON: the notes go to stderr
    assert data["dataset"] == "my_edges" and data["num_nodes"] == 120
    assert [(r["sampler"], r["layers"]) for r in data["rows"]] == [("lid", 2), ("lid", 4), ("ldd", 2),
                                                                   ("ldd", 4)]
    lid4, ldd4 = data["rows"][1]["men_mean"], data["rows"][3]["men_mean"]
    assert lid4 <= ldd4
    assert data["upload"]["files"] == {"edges": "my_edges.csv"} and data["upload"]["num_classes"] == 0
    notes = err.strip().splitlines()
    assert "note: dropped 1 self-loop" in notes
    assert any(n.startswith("note: dropped 1 duplicate edge") for n in notes)
    assert all(n.startswith("note: ") for n in notes)


def test_train_on_an_uploaded_graph_with_labels(capsys, files):
    code, out, err = run_cli(capsys, "train", "--edges", str(files["edges"]), "--features",
                             str(files["features"]), "--labels", str(files["labels"]), "--layers", "2",
                             "--seeds", "0", "1", *FAST, "--json")
    assert code == 0, err
    data = json.loads(out)
    assert data["config"]["dataset"] == "upload" and data["config"]["split"] == "per-class"
    assert len(data["runs"]) == 2 and all(0 <= r["test_acc"] <= 1 for r in data["runs"])
    assert data["upload"]["files"] == {"edges": "my_edges.csv", "features": "my_features.csv",
                                       "labels": "my_labels.csv"}
    assert data["upload"]["num_classes"] == 2
    assert any("2 labels mapped to class ids" in line for line in err.splitlines())
    # the text report names the uploaded graph
    code, out, _ = run_cli(capsys, "train", "--edges", str(files["edges"]), "--labels",
                           str(files["labels"]), *FAST)
    assert code == 0 and out.startswith("my_edges (uploaded)/per-class gcn")


def test_tune_on_an_uploaded_graph(capsys, files, tmp_path):
    code, out, err = run_cli(capsys, "tune", "--edges", str(files["edges"]), "--labels",
                             str(files["labels"]), "--trials", "2", "--study", "mine", "--storage",
                             f"sqlite:///{tmp_path / 't.sqlite'}", *FAST, "--json")
    assert code == 0, err
    data = json.loads(out)
    assert len(data["trials"]) == 2 and data["best"] is not None


@pytest.mark.parametrize("content, fragment", [
    (b"source,target\n0,1\n1,two\n", "my_edges.csv line 3: 'two' is not a non-negative integer node id"),
    (b"0,1\n1,2,3\n", "my_edges.csv line 2 has 3 fields; expected 2"),
    (b"0,1\n-1,2\n", "my_edges.csv line 2: node id -1 is negative"),
    (b"source,target\n", "my_edges.csv: edge list is empty (only a header)"),
    (b"\x89PNG\r\n\x1a\n\x00\x00", "my_edges.csv is not UTF-8 text"),
])
def test_bad_edge_file_is_exit_2_with_one_line(capsys, tmp_path, content, fragment):
    path = tmp_path / "my_edges.csv"
    path.write_bytes(content)
    for command in (["men"], ["train", *FAST]):
        code, out, err = run_cli(capsys, *command, "--edges", str(path))
        assert code == 2 and out == ""
        assert fragment in _one_error_line(err)


def test_a_pickle_is_refused_and_never_unpickled(capsys, tmp_path):
    marker = tmp_path / "unpickled"

    class Payload:  # unpickling it would create the directory ``marker``
        def __init__(self, path):
            self.path = path

        def __reduce__(self):
            return os.mkdir, (str(self.path),)

    probe = tmp_path / "probe"
    pickle.loads(pickle.dumps(Payload(probe)))
    assert probe.is_dir()  # the payload is live: loading it does run os.mkdir
    (tmp_path / "ok.csv").write_text("0,1\n1,2\n")
    for protocol in (0, pickle.HIGHEST_PROTOCOL):
        path = tmp_path / f"graph_p{protocol}.pkl"
        path.write_bytes(pickle.dumps(Payload(marker), protocol=protocol))
        for role in ("--edges", "--features", "--labels"):
            argv = ["men", "--edges", str(path)] if role == "--edges" else \
                ["men", "--edges", str(tmp_path / "ok.csv"), role, str(path)]
            code, _, err = run_cli(capsys, *argv, "--layers", "2", "--runs", "1", "--no-progress")
            assert not marker.exists()
            assert code == 2, err  # protocol 0 too: ASCII lines, not a column of class names
            line = _one_error_line(err)
            assert line.startswith(f"error: {path.name} looks like a Python pickle (protocol {protocol})")
            assert f"{role[2:]} must be a CSV/text file" in line


@pytest.mark.parametrize("argv, fragment", [
    (["train", "--dataset", "karate", "--edges", "e.csv"], "give either --dataset (karate) or your own "
                                                           "graph (--edges), not both"),
    (["men", "--labels", "l.csv"], "--labels needs --edges PATH"),
    (["tune", "--features", "f.csv"], "--features needs --edges PATH"),
    (["train", "--edges", "missing.csv"], "missing.csv does not exist"),
    (["train", "--dataset", "upload"], "dataset 'upload' is your own graph: give its files with --edges"),
    (["sweep", "--dataset", "upload"], "dataset 'upload' is your own graph"),
    (["train", "--edges", "{edges}", "--store", "{tmp}/s.sqlite"], "--store keeps runs under their "
                                                                    "dataset's name"),
    (["train", "--edges", "{edges}", "--split", "semi"], "unknown split 'semi' for upload; valid: per-class"),
    (["train", "--edges", "{edges}", "--preset", "paper"], "--recipe paper has no values for your own graph"),
])
def test_upload_flag_errors(capsys, tmp_path, files, argv, fragment):
    argv = [a.format(edges=files["edges"], tmp=tmp_path) for a in argv]
    if argv[0] == "sweep":
        argv += ["--store", str(tmp_path / "sweep.sqlite")]
    code, out, err = run_cli(capsys, *argv, "--no-progress")
    assert code == 2 and out == ""
    assert fragment in _one_error_line(err)
    assert not (tmp_path / "s.sqlite").exists()  # refused before the store was opened


def test_training_needs_labels(capsys, files):
    code, _, err = run_cli(capsys, "train", "--edges", str(files["edges"]), *FAST)
    assert code == 2
    lines = err.strip().splitlines()
    assert lines[-1].startswith("error: my_edges has no labels") and "--labels PATH" in lines[-1]
    assert all(line.startswith("note: ") for line in lines[:-1])


def test_module_entry_point_bad_upload(tmp_path):
    path = tmp_path / "edges.csv"
    path.write_text("0,1\n1,2\nthree,4\n")
    proc = run_module("men", "--edges", str(path), "--no-progress", timeout=120)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr == "error: edges.csv line 3: 'three' is not a non-negative integer node id\n"


def test_train_config_upload(files):
    config = TrainConfig(dataset=" Upload ", epochs=3, hidden=8, diag_every=0)
    assert config.dataset == "upload" and config.split == "per-class"
    assert TrainConfig(dataset="upload", split="per-class").split == "per-class"
    with pytest.raises(ConfigError, match="unknown split 'semi' for upload; valid: per-class"):
        TrainConfig(dataset="upload", split="semi")
    with pytest.raises(ConfigError, match="dataset 'upload' needs the uploaded graph"):
        train(config)
    graph, _ = csv_graph.load_files(files["edges"], labels_path=files["labels"])
    result = train(config, graph=graph)
    assert result.reason == "finished" and result.epochs_run == 3
    unlabelled, _ = csv_graph.load_files(files["edges"])
    with pytest.raises(ConfigError, match="my_edges has no labels"):
        train(config, graph=unlabelled)
