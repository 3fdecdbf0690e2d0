"""``reproduce --table``: the missing cells of a paper table trained, stored, bundled with
their fingerprints and judged; a dry run that writes nothing; a resume after an interruption;
bad input refused in one line.

The independent numbers are the bundled file's own rows (made earlier by ``sweep`` and
``train``): a row removed from a copy of the file must come back from ``reproduce`` with the
same test accuracy and the same fingerprints.
"""
from __future__ import annotations

import hashlib
import json

import pandas as pd
import pytest

from dropedge_explorer.cli import _reproduce as rep_cli
from dropedge_explorer.store import ResultStore
from dropedge_explorer.studies import reproduce as rep
from dropedge_explorer.studies import run_tables as runs
from tests.helpers.runs import refused_line, run_cli

TABLE = rep.TABLES["gcn-semi-cora"]


def _copy_without(tmp_path, drop) -> tuple:
    """A bundle folder holding the Cora semi GCN file without the rows ``drop(df)`` selects;
    the removed rows."""
    df = runs.read_runs(runs.BUNDLED_DIR / TABLE.file)
    gone = df[drop(df)]
    folder = tmp_path / "bundle"
    folder.mkdir()
    df[~drop(df)].to_csv(folder / TABLE.file, index=False)
    return folder, runs.current(gone)


def _digest(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_missing_runs_come_back_as_they_were_bundled(capsys, tmp_path, cora):
    folder, gone = _copy_without(tmp_path, lambda d: (d["layers"] == 2) & (d["seed"] == 0))
    assert sorted(gone["sampler"]) == ["dropedge", "dropedge++", "nodrop"]
    store = tmp_path / "runs.sqlite"
    argv = ["reproduce", "--table", TABLE.name, "--layers", "2", "--seeds", "1", "--store", str(store),
            "--bundle-dir", str(folder), "--no-progress", "--json"]
    code, out, err = run_cli(capsys, *argv)
    assert code == 0, err
    report = json.loads(out)
    assert report["trained"] == 3 and report["added"] == 3
    assert "not regenerated" in report["document"]  # another bundle folder: the doc is not touched
    back = runs.read_runs(folder / TABLE.file).set_index(["sampler", "seed", "layers"])
    for row in gone.itertuples():
        new = back.loc[(row.sampler, 0, 2)]
        assert new["test_acc"] == pytest.approx(row.test_acc, abs=1e-9), row.sampler
        assert (new["key"], new["masks_fp"], new["init_fp"]) == (row.key, row.masks_fp, row.init_fp)
    verdicts = {(v["layers"], v["better"], v["worse"]) for v in report["verdicts"]}
    assert (2, "dropedge++", "dropedge") in verdicts and (32, "dropedge++", "dropedge") in verdicts

    before = _digest(folder / TABLE.file)  # again: everything is there, nothing trains or changes
    code, out, _ = run_cli(capsys, *argv)
    assert code == 0 and json.loads(out)["trained"] == 0 and json.loads(out)["added"] == 0
    assert _digest(folder / TABLE.file) == before


def test_a_dry_run_lists_the_missing_cells_and_writes_nothing(capsys, tmp_path, cora):
    folder, gone = _copy_without(tmp_path, lambda d: (d["layers"] == 4) & d["seed"].isin([1, 2]))
    before = _digest(folder / TABLE.file)
    store = tmp_path / "never.sqlite"
    code, out, err = run_cli(capsys, "reproduce", "--table", TABLE.name, "--layers", "4", "--seeds", "3",
                             "--store", str(store), "--bundle-dir", str(folder), "--dry-run", "--json",
                             "--no-progress")
    assert code == 0, err
    plan = json.loads(out)
    cells = {(c["sampler"], c["seeds"]) for c in plan["cells"]}
    assert cells == {(s, 2) for s in gone["sampler"]}  # seeds 1 and 2 of each sampler at L = 4
    assert plan["runs"] == len(gone) == 6
    assert all(c["epoch_s"] > 0 and c["seconds"] > 0 for c in plan["cells"])
    # the GPU estimate by hand: 0.03 s per epoch at 32 layers, so 0.00375 s at 4; each cell's
    # epochs the mean of its bundled runs still in the file
    kept = pd.read_csv(folder / TABLE.file)
    epochs = {s: kept[(kept["layers"] == 4) & (kept["sampler"] == s)]["epochs_run"].mean()
              for s in gone["sampler"].unique()}
    assert plan["gpu_seconds_estimate"] == pytest.approx(sum(2 * e * 0.03 * 4 / 32 for e in epochs.values()))
    assert not store.exists() and _digest(folder / TABLE.file) == before


def test_an_interrupted_reproduction_resumes_where_it_stopped(capsys, tmp_path, cora, monkeypatch):
    """The first cell is stored before the interruption; the second invocation trains only the
    cell that was cut short."""
    from dropedge_explorer.cli import _reproduce as command

    folder, _ = _copy_without(tmp_path, lambda d: (d["layers"] == 2) & (d["seed"] == 0)
                              & (d["sampler"] != "dropedge++"))
    store = tmp_path / "runs.sqlite"
    argv = ["reproduce", "--table", TABLE.name, "--layers", "2", "--seeds", "1", "--store", str(store),
            "--bundle-dir", str(folder), "--no-progress"]
    trained = []
    real = command.train_and_store

    def second_interrupts(config, store, graph):
        if trained:
            raise KeyboardInterrupt
        trained.append(config.sampler)
        return real(config, store, graph)

    monkeypatch.setattr(command, "train_and_store", second_interrupts)
    line = refused_line(capsys, *argv)
    assert "interrupted after 1 run(s)" in line and "again to resume" in line
    assert len(ResultStore(store)) == 1
    monkeypatch.setattr(command, "train_and_store", real)
    code, out, err = run_cli(capsys, *argv)
    assert code == 0, err
    assert "1 trained here" in out and "2 row(s) added" in out
    assert len(ResultStore(store)) == 2


@pytest.mark.parametrize(("argv", "fragment"), [
    (["--table", "gcn-semi-pubmed"], "unknown table 'gcn-semi-pubmed'; valid: gcn-semi-cora"),
    (["--table", "gcn-semi-cora", "--layers", "3"], "--layers 3: not a depth of the paper's table"),
    (["--table", "gcn-semi-cora", "--seeds", "0"], "--seeds 0: allowed 1 to 100"),
    (["--table", "gcn-semi-cora", "--device", "tpu"], "unknown device 'tpu'"),
    (["--table", "gcn-semi-cora", "--bundle-dir", "/nonexistent"], "--bundle-dir '/nonexistent' is not an"),
    (["--table", "gcn-semi-cora", "--doc", "README.md"], "--doc 'README.md': not a file with"),
])
def test_bad_input_is_refused_in_one_line(capsys, tmp_path, argv, fragment):
    store = tmp_path / "never.sqlite"
    assert fragment in refused_line(capsys, "reproduce", *argv, "--store", store, "--dry-run")
    assert not store.exists()


def test_a_table_run_never_bundles_runs_of_other_settings(tmp_path, cora):
    """A store run of the table's dataset, depth and sampler under other settings (5 epochs)
    is not the table's: the bundled file is left as it was."""
    from dropedge_explorer.store import ResultStore as Store
    from dropedge_explorer.training import TrainConfig, train

    folder, _ = _copy_without(tmp_path, lambda d: d["seed"] < 0)
    before = _digest(folder / TABLE.file)
    store = Store(tmp_path / "runs.sqlite")
    store.put(train(TrainConfig(dataset="cora", split="semi", num_layers=2, sampler="nodrop", seed=7,
                                epochs=5, diag_every=0), graph=cora))
    assert rep.bundle(TABLE, store, folder)[1] == 0
    assert _digest(folder / TABLE.file) == before


def test_a_bundle_that_cannot_be_written_is_one_line_and_the_runs_stay_stored(capsys, tmp_path, cora,
                                                                             monkeypatch):
    """A full disk while the bundled file is written (the writer raises ENOSPC as the kernel
    would): one line, the file as it was, the trained run kept in the store."""
    import contextlib
    import errno

    folder, _ = _copy_without(tmp_path, lambda d: (d["layers"] == 2) & (d["seed"] == 0)
                              & (d["sampler"] == "nodrop"))
    before = _digest(folder / TABLE.file)

    @contextlib.contextmanager
    def full_disk(path):
        raise OSError(errno.ENOSPC, "No space left on device")
        yield

    monkeypatch.setattr(rep.paths, "replaced", full_disk)
    store = tmp_path / "runs.sqlite"
    line = refused_line(capsys, "reproduce", "--table", TABLE.name, "--layers", "2", "--seeds", "1",
                        "--store", store, "--bundle-dir", folder, "--no-progress")
    assert "cannot write the bundled file" in line and "No space left on device" in line
    assert len(ResultStore(store)) == 1 and _digest(folder / TABLE.file) == before


LONG = 10_000


@pytest.mark.parametrize("argv", [
    ["--table", "x" * LONG],
    ["--table", "gcn-semi-cora", "--doc", "d" * LONG],
    ["--table", "gcn-semi-cora", "--bundle-dir", "b" * LONG],
    ["--table", "gcn-semi-cora", "--device", "t" * LONG],
    ["--table", "gcn-semi-cora", "--seeds", "9" * 4000],
])
def test_every_echoed_value_is_bounded(capsys, tmp_path, argv):
    """Issue 48: a 10,000-character table name was echoed whole; a path that long was an
    ``OSError`` traceback. One line of at most a few hundred characters, the length said."""
    store = tmp_path / "never.sqlite"
    line = refused_line(capsys, "reproduce", *argv, "--store", store, "--dry-run")
    assert len(line) < 400 and ("characters" in line or "digits" in line), line
    assert not store.exists()


@pytest.mark.parametrize("size", [rep_cli.MAX_DOC_BYTES + 1, 3 * 2**30])
def test_a_huge_doc_is_refused_by_its_size_without_reading_it(capsys, tmp_path, size):
    """Issue 48: ``--doc`` of 3 GB was read whole (MemoryError, 3.4 GB peak). A sparse file
    (``truncate``: no 3 GB written) with the generator's marker at its start is refused by
    its size; tracemalloc sees far less than one bound allocated."""
    import os
    import tracemalloc

    doc = tmp_path / "huge.md"
    doc.write_text(rep_cli.DOC_MARKER + "x -->\n", encoding="utf-8")
    os.truncate(doc, size)
    store = tmp_path / "never.sqlite"
    tracemalloc.start()
    try:
        line = refused_line(capsys, "reproduce", "--table", "gcn-semi-cora", "--doc", doc, "--store", store,
                            "--dry-run")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert f"is {size} bytes, above the {rep_cli.MAX_DOC_BYTES} bytes" in line, line
    assert peak < rep_cli.MAX_DOC_BYTES // 4 and not store.exists()


def test_the_real_document_fits_the_doc_bound():
    from tests.helpers import REPO

    assert (REPO / "docs" / "REPRODUCTION.md").stat().st_size * 20 < rep_cli.MAX_DOC_BYTES


def test_verdicts_are_read_from_the_bundle_dir(capsys, tmp_path):
    """Issue 48: ``--bundle-dir DIR`` printed the verdicts of the package's own files. A DIR
    holding only the depth-2 rows (every cell there, so nothing trains) has verdicts at depth
    2 only, over DIR's seeds."""
    df = runs.read_runs(runs.BUNDLED_DIR / TABLE.file)
    folder = tmp_path / "bundle"
    folder.mkdir()
    two = df[df["layers"] == 2]
    two.to_csv(folder / TABLE.file, index=False)
    current = runs.current(two)
    seeds = {s: set(current.loc[current["sampler"] == s, "seed"]) for s in current["sampler"].unique()}
    argv = ["reproduce", "--table", TABLE.name, "--layers", "2", "--seeds", "1", "--no-progress",
            "--store", str(tmp_path / "runs.sqlite"), "--bundle-dir", str(folder)]
    code, out, err = run_cli(capsys, *argv, "--json")
    assert code == 0, err
    report = json.loads(out)
    assert report["trained"] == 0 and report["verdicts"]
    assert {v["layers"] for v in report["verdicts"]} == {2}
    assert all(v["n"] == len(seeds[v["better"]] & seeds[v["worse"]]) for v in report["verdicts"])
    code, out, err = run_cli(capsys, *argv)
    lines = [line for line in out.splitlines() if line.startswith("  gcn L=")]
    assert code == 0 and lines and all(line.startswith("  gcn L=2:") for line in lines), out
