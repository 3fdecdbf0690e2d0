"""The results store: keys, roundtrip, frames and exports, concurrent writers."""
from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

from dropedge_explorer import paths
from dropedge_explorer.store import SCHEMA_VERSION, ResultStore, StoreError, canonical_json, run_key
from dropedge_explorer.studies.run_tables import ResultsError, export_table
from dropedge_explorer.training import TrainConfig, train
from tests.helpers import REPO
from tests.helpers.runs import fake_result


def test_run_key_is_the_hash_of_the_canonical_config():
    c = TrainConfig(dataset="karate")
    assert run_key(c) == run_key(c.to_dict()) == run_key(TrainConfig(dataset="KARATE"))
    assert run_key(c) != run_key(c.replace(seed=1))
    assert len(run_key(c)) == 64
    assert json.loads(canonical_json(c)) == c.to_dict()
    # diagnostics and the device do not change a run: equal runs share one key
    assert run_key(c) == run_key(c.replace(diag_every=0)) == run_key(c.replace(device="cpu"))
    # the recipe does: the same values under another name are another run
    assert run_key(c) != run_key(TrainConfig.from_dict({**c.to_dict(), "recipe": "quick"}))


def test_schema_1_rows_are_rekeyed(tmp_path):
    """A store written before recipes (keys hashing diag_every and device, no recipe
    column) is migrated on open: each row gets its recipe and today's key."""
    import hashlib
    import sqlite3

    path = tmp_path / "old.sqlite"
    store = ResultStore(path)
    quick = fake_result(0, recipe="quick", diag_every=5)
    paper = fake_result(1, recipe="paper", dataset="cora", split="semi", num_layers=8)
    for result in (quick, paper):
        store.put(result)
    with sqlite3.connect(path) as conn:  # make them look like schema-1 rows
        for result in (quick, paper):
            legacy = result.config.to_dict()
            legacy.pop("recipe")
            text = json.dumps(legacy, sort_keys=True, separators=(",", ":"))
            conn.execute("UPDATE runs SET key = ?, config_json = ?, recipe = NULL, schema_version = 1 "
                         "WHERE key = ?", (hashlib.sha256(text.encode()).hexdigest(), text,
                                           run_key(result.config)))
    migrated = ResultStore(path)
    assert migrated.keys() == {run_key(quick.config), run_key(paper.config)}
    assert migrated.get(run_key(paper.config))["recipe"] == "paper"
    assert migrated.get(quick.config)["config"]["recipe"] == "quick"


def test_schema_2_appnp_star_rows_are_renamed_and_rekeyed(tmp_path):
    """A store written while the backbone was called ``"appnp*"`` (schema 2) is migrated
    on open: backbone ``appnp_star`` in the column and the config, today's key; other
    rows keep theirs; a run stored under both names stays once."""
    import hashlib
    import sqlite3

    path = tmp_path / "old.sqlite"
    store = ResultStore(path)
    appnp = [fake_result(seed, backbone="appnp_star", num_layers=4) for seed in (0, 1)]
    gcn = fake_result(0)
    for result in (*appnp, gcn):
        store.put(result)
    old_keys = {}
    with sqlite3.connect(path) as conn:  # make the APPNP* rows look like schema-2 rows
        conn.execute("UPDATE runs SET schema_version = 2")
        for result in appnp:
            old = {**result.config.to_dict(), "backbone": "appnp*"}
            text = json.dumps(old, sort_keys=True, separators=(",", ":"))
            keyed = {k: v for k, v in old.items() if k not in ("diag_every", "device")}
            old_keys[result.config.seed] = hashlib.sha256(
                json.dumps(keyed, sort_keys=True, separators=(",", ":")).encode()).hexdigest()
            conn.execute("UPDATE runs SET key = ?, backbone = 'appnp*', config_json = ? WHERE key = ?",
                         (old_keys[result.config.seed], text, run_key(result.config)))
        assert conn.execute("SELECT count(*) FROM runs WHERE backbone = 'appnp*'").fetchone()[0] == 2
        # seed 1 stored under both names (an old and a new program): one row after migration
        conn.execute("CREATE TEMP TABLE copy AS SELECT * FROM runs WHERE key = ?", (old_keys[1],))
        conn.execute("UPDATE copy SET key = ?, backbone = 'appnp_star', config_json = ?",
                     (run_key(appnp[1].config), canonical_json(appnp[1].config)))
        conn.execute("INSERT INTO runs SELECT * FROM copy")
        assert conn.execute("SELECT count(*) FROM runs").fetchone()[0] == 4
    migrated = ResultStore(path)
    assert migrated.keys() == {run_key(r.config) for r in (*appnp, gcn)}
    assert not {run_key(r.config) for r in appnp} & set(old_keys.values())  # the keys did change
    assert migrated.get(gcn.config)["schema_version"] == SCHEMA_VERSION  # unchanged key, schema bumped
    row = migrated.get(TrainConfig(dataset="karate", backbone="appnp*", num_layers=4, seed=0))
    assert row["backbone"] == "appnp_star" and row["config"]["backbone"] == "appnp_star"
    assert set(migrated.to_frame()["backbone"]) == {"gcn", "appnp_star"}


def test_a_trained_run_is_stored_with_its_fingerprint(tmp_path, karate):
    """Issue 47: the run carries the fingerprint its training recorded, equal to the one
    computed from its config alone (the masks by sampling, the weights by building), and
    its last weights' digest is the trained model's, hashed here by hand."""
    import hashlib

    from dropedge_explorer.training._fingerprint import fingerprint, run_masks_fingerprints

    config = TrainConfig(dataset="karate", num_layers=8, sampler="dropedge++", dropout=0.5, epochs=7,
                         patience=0, diag_every=0, seed=5)
    result = train(config, graph=karate)
    store = ResultStore(tmp_path / "r.sqlite")
    row = store.get(store.put(result))
    expected = fingerprint(config, karate)
    assert (row["masks_fp"], row["init_fp"]) == (expected.masks, expected.init)
    assert row["run_masks_fp"] == run_masks_fingerprints(config, karate, [7])[7]
    assert row["run_masks_fp"] != run_masks_fingerprints(config, karate, [6])[6]  # every epoch counts
    h = hashlib.sha256()
    for name, value in result.model.state_dict().items():
        h.update(f"{name}:{value.dtype}:{tuple(value.shape)}".encode() + value.contiguous().numpy().tobytes())
    assert row["final_fp"] == h.hexdigest()[:16] != row["init_fp"]
    state = result.model.generator.get_state().numpy().tobytes()
    assert row["dropout_fp"] == hashlib.sha256(state).hexdigest()[:16]
    assert row["schema_version"] == SCHEMA_VERSION == 4


def test_schema_3_rows_get_empty_fingerprint_columns(tmp_path):
    """A store written before fingerprints (schema 3, no fingerprint columns) opens: the
    columns are added, its rows keep their keys and carry no fingerprint (they were trained
    before it was recorded); a run stored now carries its own."""
    import sqlite3

    path = tmp_path / "old.sqlite"
    store = ResultStore(path)
    old = fake_result(0)
    store.put(old)
    store.close()
    with sqlite3.connect(path) as conn:
        for name in ("masks_fp", "init_fp", "run_masks_fp", "dropout_fp", "final_fp"):
            conn.execute(f"ALTER TABLE runs DROP COLUMN {name}")
        conn.execute("UPDATE runs SET schema_version = 3")
    reopened = ResultStore(path)
    row = reopened.get(old.config)
    assert row["key"] == run_key(old.config) and row["schema_version"] == 4
    assert all(row[n] is None for n in ("masks_fp", "init_fp", "run_masks_fp", "dropout_fp", "final_fp"))
    new = train(TrainConfig(dataset="karate", num_layers=2, epochs=2, seed=1, diag_every=0))
    assert reopened.get(reopened.put(new))["run_masks_fp"] == new.fingerprint["run_masks_fp"]


def test_roundtrip(tmp_path, karate):
    store = ResultStore(tmp_path / "sub" / "r.sqlite")
    result = train(TrainConfig(dataset="karate", hidden=8, epochs=4, diag_every=2), graph=karate)
    assert not store.has(result.config)
    key = store.put(result)
    assert key == run_key(result.config)
    assert store.has(key) and store.has(result.config) and len(store) == 1
    row = store.get(key)
    assert row["config"] == result.config.to_dict()
    assert row["history"] == result.history and row["diagnostics"] == result.diagnostics
    assert row["test_acc"] == result.test_acc and row["ran_on"] == "cpu"
    assert row["num_layers"] == 2 and row["self_loop"] is False
    assert store.get("0" * 64) is None
    store.put(result)  # replacing keeps one row
    assert len(store) == 1 and store.keys() == {key}
    assert store.delete(key) and not store.has(key)


def test_frame_and_exports(tmp_path):
    store = ResultStore(tmp_path / "r.sqlite")
    for seed in range(3):
        store.put(fake_result(seed, sampler="lid"))
    df = store.to_frame()
    assert len(df) == 3 and set(df["seed"]) == {0, 1, 2}
    assert {"dataset", "backbone", "num_layers", "sampler", "test_acc", "mean_epoch_time"} <= set(df.columns)
    assert df["directed"].dtype == bool
    curves = store.to_frame(curves=True)
    assert curves["history"].iloc[0][0]["epoch"] == 1
    csv = export_table(store, tmp_path / "out" / "runs.csv")
    assert csv.read_text().splitlines()[0].startswith("key,")
    pytest.importorskip("pyarrow")
    import pandas as pd

    assert len(pd.read_parquet(export_table(store, tmp_path / "runs.parquet"))) == 3
    with pytest.raises(ResultsError, match="unknown export format '.xlsx'"):
        export_table(store, tmp_path / "runs.xlsx")


def test_bad_paths(tmp_path):
    with pytest.raises(StoreError, match="is a directory"):
        ResultStore(tmp_path)
    junk = tmp_path / "junk.sqlite"
    junk.write_bytes(b"this is not a database" * 100)
    with pytest.raises(StoreError, match="not a SQLite database"):
        ResultStore(junk)


def test_default_path(monkeypatch, tmp_path):
    monkeypatch.setenv("DROPEDGE_RESULTS", str(tmp_path / "x.sqlite"))
    assert paths.results_store() == tmp_path / "x.sqlite"
    assert ResultStore().path == tmp_path / "x.sqlite"  # the store's default is that one
    monkeypatch.delenv("DROPEDGE_RESULTS")
    # results/ of the checkout, wherever the command is started from (dropedge_explorer.paths)
    assert paths.results_store() == paths.REPO / "results" / "results.sqlite"
    monkeypatch.chdir(tmp_path)
    assert paths.results_store() == paths.REPO / "results" / "results.sqlite"


WRITER = textwrap.dedent("""
    import sys
    from tests.helpers.runs import fake_result
    from dropedge_explorer.store import ResultStore
    store = ResultStore(sys.argv[1], timeout=60)
    offset = int(sys.argv[2])
    for seed in range(offset, offset + 40):
        store.put(fake_result(seed))
""")


def test_two_processes_writing_lose_no_rows(tmp_path):
    path = tmp_path / "shared.sqlite"
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, str(path), str(offset)], cwd=REPO,
                              stderr=subprocess.PIPE, text=True) for offset in (0, 1000)]
    for p in procs:
        _, err = p.communicate(timeout=300)
        assert p.returncode == 0, err[-2000:]
    store = ResultStore(path)
    assert len(store) == 80
    assert set(store.to_frame()["seed"]) == set(range(40)) | set(range(1000, 1040))
