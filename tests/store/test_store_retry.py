"""A finished run whose store write fails for a while is written again: a real SQLite
store locked by another connection (``BEGIN EXCLUSIVE``), released after the first failed
write; one never released (bounded retries, then the error); a store whose table is not
ours (no retry: it will not pass). The store says which by the error's type."""
from __future__ import annotations

import sqlite3

import pytest

from dropedge_explorer.store import ForeignStore, ResultStore, StoreBusy, StoreUnavailable
from dropedge_explorer.studies import sweep
from dropedge_explorer.training import TrainConfig, train


@pytest.fixture(scope="module")
def result():
    return train(TrainConfig(dataset="karate", num_layers=2, epochs=3, hidden=8, diag_every=0))


def _rows(path) -> list[str]:
    """The stored keys, read with sqlite3 itself (not through the store)."""
    with sqlite3.connect(path) as db:
        return [r[0] for r in db.execute("SELECT key FROM runs")]


def _lock(path) -> sqlite3.Connection:
    holder = sqlite3.connect(path, isolation_level=None, timeout=0)
    holder.execute("BEGIN EXCLUSIVE")  # no other connection may read or write until COMMIT
    return holder


def test_a_write_that_meets_a_lock_is_retried_once_it_is_released(tmp_path, result):
    path = tmp_path / "runs.sqlite"
    store = ResultStore(path, timeout=0.2)
    holder = _lock(path)
    retries = []

    errors = []

    def on_retry(attempt, error):
        retries.append(str(error))
        errors.append(type(error))
        holder.execute("COMMIT")  # the other program lets go after our first failure

    key = sweep.store_result(store, result, delays=(0.01, 0.01, 0.01), on_retry=on_retry)
    holder.close()
    assert len(retries) == 1 and "locked" in retries[0]
    assert errors == [StoreBusy]  # the store's announced wait ran out: a lock, typed as one
    assert _rows(path) == [key]


def test_a_lock_never_released_ends_in_one_error_after_the_bounded_retries(tmp_path, result):
    path = tmp_path / "runs.sqlite"
    store = ResultStore(path, timeout=0.1)
    holder = _lock(path)
    retries = []
    try:
        with pytest.raises(StoreBusy, match="locked"):
            sweep.store_result(store, result, delays=(0.01, 0.02, 0.03),
                               on_retry=lambda a, e: retries.append(a))
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert retries == [0, 1, 2]  # three pauses, four writes
    assert _rows(path) == []


def test_an_error_that_will_not_pass_is_not_retried(tmp_path, result):
    path = tmp_path / "runs.sqlite"
    store = ResultStore(path, timeout=0.2)
    with sqlite3.connect(path) as db:  # another program replaced the table meanwhile
        db.execute("DROP TABLE runs")
        db.execute("CREATE TABLE runs (key TEXT PRIMARY KEY)")
    retries = []
    with pytest.raises(ForeignStore) as info:
        sweep.store_result(store, result, delays=(0.01,), on_retry=lambda a, e: retries.append(a))
    assert retries == [] and not isinstance(info.value, StoreUnavailable)


def test_a_postgresql_store_down_as_a_run_finishes_is_written_once_it_is_back(result):
    from tests.helpers.postgres import PostgresServer, find_bin_dir

    bin_dir = find_bin_dir()
    if bin_dir is None:
        pytest.skip("no PostgreSQL server binaries (initdb, pg_ctl): apt-get install postgresql")
    server = PostgresServer(bin_dir).start()
    try:
        url = server.new_database()
        store = ResultStore(url)
        server.pause()  # the server stops as the run finishes
        retries, kinds = [], []

        def on_retry(attempt, error):
            retries.append(str(error))
            kinds.append(type(error))
            if attempt == 1:
                server.resume()  # back after two failed writes

        key = sweep.store_result(store, result, delays=(0.1,) * 6, on_retry=on_retry)
        store.close()
        import sqlalchemy as sa

        engine = sa.create_engine(url.replace("postgresql://", "postgresql+psycopg://"))
        with engine.connect() as conn:
            keys = [r[0] for r in conn.exec_driver_sql("SELECT key FROM runs")]
        engine.dispose()
    finally:
        server.stop()
    assert len(retries) >= 2 and all("results store" in r for r in retries)
    assert kinds and all(k is StoreUnavailable for k in kinds)  # a server's connection errors
    assert keys == [key]
