"""Sweeps and tuning on a real PostgreSQL server (issue 18): a throwaway cluster
(:mod:`tests.postgres`), worker processes started at once, no mocks.

What is proven: N ``sweep`` workers on one grid store every run once and train every run
once (each worker's ``--json`` lists the runs it trained); a worker killed with SIGKILL
mid-run leaves a claim that another worker takes over after the lease; ``tune`` workers
share one study on the server; the store refuses another program's table there too.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from dropedge_explorer import cli
from dropedge_explorer.store import ResultStore, StoreError, run_key
from dropedge_explorer.studies import tuning
from tests.helpers import REPO
from tests.helpers.runs import fake_result

WORKER = [sys.executable, "-m", "dropedge_core", "sweep", "--dataset", "karate", "--samplers", "nodrop",
          "dropedge", "dropedge++", "--layers", "2", "--hidden", "8", "--diag-every", "0", "--threads", "1",
          "--json", "--no-progress"]


def _grid(*extra: str):
    return cli.sweep_grid(cli.build_parser().parse_args([*WORKER[3:], *extra]))


def _start(*argv: str) -> subprocess.Popen:
    return subprocess.Popen([*argv], cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": str(REPO)})


def _report(proc: subprocess.Popen, timeout: float = 120) -> dict:
    out, err = proc.communicate(timeout=timeout)
    assert proc.returncode == 0, err[-2000:]
    return json.loads(out)


SPLIT_EPOCHS = "30"
TUNE = [sys.executable, "-m", "dropedge_core", "tune", "--dataset", "karate", "--layers", "2",
        "--trials", "3", "--study", "shared", "--search", "random", "--no-pruning", "--epochs", "10",
        "--hidden", "8",
        "--diag-every", "0", "--threads", "1", "--json", "--no-progress"]


@pytest.fixture(scope="module")
def workers(pg):
    """Every multi-worker group started at once, as on a real cluster (and so that the
    slow part, starting Python processes, overlaps): 2 sweep workers on one database,
    3 on another, 2 batched sweep workers on a third, 2 tune workers on a fourth.
    ``{group: (url, [process, ...])}``."""
    groups = {}
    for n in (2, 3):
        url = pg.new_database()
        seeds = [str(s) for s in range(2 * n)]
        groups[n] = (url, [_start(*WORKER, "--seeds", *seeds, "--epochs", SPLIT_EPOCHS, "--store", url)
                           for _ in range(n)])
    url = pg.new_database()  # 2 workers training each cell's free seeds in one batch
    groups["batched"] = (url, [_start(*WORKER, "--seeds", *map(str, range(4)), "--epochs", SPLIT_EPOCHS,
                                      "--batch-seeds", "--store", url) for _ in range(2)])
    url = pg.new_database()
    groups["tune"] = (url, [_start(*TUNE, "--storage", url) for _ in range(2)])
    yield groups
    for _, procs in groups.values():
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.communicate()


@pytest.mark.usefixtures("workers")  # the worker processes start meanwhile
def test_store_on_the_server(pg):
    url = pg.new_database()
    store = ResultStore(url)
    result = fake_result(0)
    key = store.put(result)
    store.put(result)  # replacing keeps one row
    row = store.get(key)
    assert len(store) == 1 and store.keys() == {key} and row["config"] == result.config.to_dict()
    assert row["directed"] is False and row["history"] == result.history
    assert store.to_frame()["seed"].tolist() == [0]
    assert store.claim("k", "a", 60) and not store.claim("k", "b", 60) and not store.claim(key, "b", 60)
    assert store.claim("dead", "a", 1) and not store.renew("dead", "b", 1)
    server_now = store._now
    store._now = lambda conn: server_now(conn) + 1.1  # the server's clock, 1.1 s on: a's lease is over
    assert store.claim("dead", "b", 60) and not store.renew("dead", "a", 60)
    assert store.delete(key) and len(store) == 0
    store.close()
    # another program's table of the same name on the server: refused, untouched
    import sqlalchemy as sa

    other = pg.new_database()
    engine = sa.create_engine(other.replace("postgresql://", "postgresql+psycopg://"))
    with engine.begin() as conn:
        conn.exec_driver_sql("CREATE TABLE runs (id serial PRIMARY KEY, athlete text)")
        conn.exec_driver_sql("INSERT INTO runs (athlete) VALUES ('ana')")
    with pytest.raises(StoreError, match="lacks key.*nothing was changed"):
        ResultStore(other)
    with engine.connect() as conn:
        columns = conn.exec_driver_sql("SELECT column_name FROM information_schema.columns "
                                       "WHERE table_name = 'runs' ORDER BY 1").scalars().all()
        tables = conn.exec_driver_sql("SELECT count(*) FROM pg_tables WHERE schemaname = 'public'").scalar()
        assert columns == ["athlete", "id"] and tables == 1
    engine.dispose()
    with pytest.raises(StoreError, match='database "nosuch" does not exist'):
        ResultStore(pg.url("nosuch"))


@pytest.mark.parametrize("n", [2, 3, "batched"])
def test_sweep_workers_split_a_grid(workers, n):
    """N workers started at once (two with --batch-seeds): every run stored once, trained once."""
    url, procs = workers[n]
    grid = _grid("--seeds", *map(str, range(4 if n == "batched" else 2 * n)), "--epochs", SPLIT_EPOCHS)
    reports = [_report(p, timeout=300) for p in procs]
    assert all(r["batch_seeds"] == (n == "batched") for r in reports)
    trained = [key for r in reports for key in r["ran_keys"]]
    assert sorted(trained) == sorted(run_key(c) for c in grid)  # each run trained by exactly one worker
    assert all(r["total"] == len(grid) and r["ran"] + r["skipped"] == len(grid) for r in reports)
    store = ResultStore(url)
    assert store.keys() == {run_key(c) for c in grid} and len(store) == len(grid)
    assert store.claims() == []
    frame = store.to_frame()
    assert frame["key"].is_unique and frame["test_acc"].notna().all()
    print(f"{n} workers trained {[r['ran'] for r in reports]} of {len(grid)} runs")
    store.close()


def test_a_killed_workers_run_is_taken_over_after_its_lease(pg):
    url = pg.new_database()
    args = ["--seeds", "0", "1", "--samplers", "nodrop", "--epochs", "400", "--patience", "0",
            "--store", url, "--lease", "2"]
    grid = _grid(*args[:-4])
    store = ResultStore(url)
    victim = _start(*WORKER, *args)
    deadline = time.monotonic() + 90
    while not store.claims():
        assert time.monotonic() < deadline and victim.poll() is None, "the worker never claimed a run"
        time.sleep(0.05)
    # a claim is held only while its run trains (it goes with the stored run): killed mid-run
    victim.send_signal(signal.SIGKILL)
    victim.communicate(timeout=30)
    held = store.claims()
    assert len(store) == 0 and len(held) == 1 and not held[0]["expired"]  # a live-looking claim is left
    report = _report(_start(*WORKER, *args), timeout=240)
    # the survivor trains the free run, and the dead worker's run once its lease ran out
    assert sorted(report["ran_keys"]) == sorted(run_key(c) for c in grid) and report["skipped"] == 0
    assert held[0]["key"] in report["ran_keys"]
    assert store.claims() == [] and len(store) == 2
    store.close()


def test_tune_workers_share_a_study_on_the_server(pg, workers):
    url, procs = workers["tune"]
    for p in procs:
        assert _report(p, timeout=300)["best"]["val_acc"] is not None
    import optuna

    study = optuna.load_study(study_name="shared", storage=tuning.check_storage(url))
    assert len(study.trials) == 6
    assert all(t.state == optuna.trial.TrialState.COMPLETE for t in study.trials)
    # the results store and the Optuna storage keep to their own databases
    results_db = pg.new_database()
    ResultStore(results_db).close()
    with pytest.raises(tuning.TuningError, match="is the DropEdge results store"):
        tuning.check_storage(results_db)
    with pytest.raises(StoreError, match="not a DropEdge results store: it holds an Optuna storage"):
        ResultStore(url)


def test_tuning_page_reads_a_study_on_the_server(pg, workers, monkeypatch):
    """``DROPEDGE_TUNING_STORAGE`` a URL: the page shows the CLI workers' study."""
    from tests.helpers.app import _app, _ok

    url, procs = workers["tune"]
    for p in procs:
        p.wait(timeout=300)
    monkeypatch.setenv("DROPEDGE_TUNING_STORAGE", url)
    at = _app()
    at.switch_page("app_pages/tuning.py").run()
    _ok(at)
    # the kind of store and its name, never the server's address or credentials
    assert any("Storage: PostgreSQL database " in c.value for c in at.caption)
    assert not any("127.0.0.1" in c.value or "dropedge@" in c.value for c in at.caption)
    at.text_input(key="tune_study").input("shared").run()
    _ok(at)
    assert not at.error and len(at.dataframe[0].value) == 6
    assert any("6 finished, 0 pruned of 6 trials" in c.value for c in at.caption)


def test_depth_study_page_reads_and_fills_a_server_store(pg, tmp_path, monkeypatch):
    """``DROPEDGE_RESULTS`` a URL: "Run missing" stores its runs there (claimed like a CLI
    worker's) and the page reads them back."""

    from tests.helpers.app import _ok
    from tests.helpers.app import depth_page as _page

    url = pg.new_database()
    monkeypatch.setenv("DROPEDGE_RESULTS", url)
    monkeypatch.setattr("dropedge_explorer.studies.run_tables.BUNDLED_DIR", tmp_path / "bundled")
    at = _page(depths=(2,), seeds=1)
    assert at.button(key="ds_run").label == "Run missing (3)" and not at.button(key="ds_run").disabled
    assert any("Store: PostgreSQL database " in c.value for c in at.caption)
    assert not any("127.0.0.1" in c.value or "dropedge@" in c.value for c in at.caption)
    at.button(key="ds_run").click().run()
    _ok(at)
    job = at.session_state["ds_job"]
    assert job.join(60) and job.error is None and job.stored == 3
    at.run()
    _ok(at)
    assert at.button(key="ds_run").label == "Run missing (0)"
    assert any("**3 from the results store**" in c.value for c in at.caption)
    assert len(ResultStore(url)) == 3
