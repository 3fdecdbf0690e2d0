"""Databases that are not ours, or not writable (issue 29, class 4), and locations parsed
once (class 5): :func:`dropedge_explorer.databases.inspect` and :func:`dropedge_explorer.locations.parse`.

Every refusal is one ``error:`` line (exit 2) naming the location and what it holds, and no
byte of the refused file changes: its SHA-256 and its folder's listing (no ``-wal``,
``-shm`` or ``-journal`` left beside it) are compared before and after. On PostgreSQL a
``pg_dump`` of the database is compared before and after. The databases are made here
with ``sqlite3``, Optuna itself and plain SQL, not by the code under test.
"""
from __future__ import annotations

import contextlib
import hashlib
import os
import sqlite3
import subprocess
from pathlib import Path

import optuna
import pytest
import sqlalchemy as sa

from dropedge_explorer import databases, locations
from dropedge_explorer.store import SCHEMA_VERSION, ResultStore, StoreError, run_key
from dropedge_explorer.studies import _tuning_storage as tuning_storage
from dropedge_explorer.studies import tuning
from dropedge_explorer.training import RunResult, TrainConfig
from tests.helpers.app import APP
from tests.helpers.postgres import PostgresServer
from tests.helpers.runs import refused_line

SWEEP = ["sweep", "--dataset", "karate", "--samplers", "nodrop", "--layers", "2", "--epochs", "2",
         "--hidden", "8", "--diag-every", "0", "--json", "--no-progress"]
TUNE = ["tune", "--dataset", "karate", "--trials", "1", "--epochs", "2", "--no-progress"]


def _result(seed: int = 0) -> RunResult:
    return RunResult(config=TrainConfig(dataset="karate", seed=seed), reason="finished", message="",
                     best_epoch=1, best_val_acc=0.5, test_acc=0.4, epochs_run=1, total_time=0.1,
                     device="cpu", history=[], diagnostics=[])


def _fingerprint(path: Path) -> tuple:
    """The file's SHA-256 and its folder's listing (a journal or WAL file would show there)."""
    digest = hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else None
    return digest, sorted(p.name for p in path.parent.iterdir())



def _sqlite(path: Path, *sql: str) -> Path:
    conn = sqlite3.connect(path)
    with conn:
        for statement in sql:
            conn.execute(statement)
    conn.close()
    return path


def _results_store(path: Path) -> Path:
    store = ResultStore(path)
    store.put(_result(0))
    store.close()
    assert not Path(f"{path}-wal").exists()  # the last connection folded the WAL in
    return path


def _optuna_storage(path: Path, version: str | None = None, revision: str | None = None) -> Path:
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    optuna.create_study(study_name="theirs", storage=f"sqlite:///{path}")
    if version:  # what a newer Optuna would have written
        _sqlite(path, f"UPDATE version_info SET library_version = '{version}'",
                f"UPDATE alembic_version SET version_num = '{revision}'")
    return path


@contextlib.contextmanager
def _read_only(path: Path):
    """``path`` unwritable even for root (the immutable attribute), else by its mode."""
    if os.geteuid() == 0:
        if subprocess.run(["chattr", "+i", str(path)], capture_output=True).returncode != 0:
            pytest.skip("chattr +i is not available here (root writes any file)")
    else:
        path.chmod(0o444)
    try:
        assert not os.access(path, os.W_OK)
        yield path
    finally:
        if os.geteuid() == 0:
            subprocess.run(["chattr", "-i", str(path)], capture_output=True)
        path.chmod(0o644)


# ----------------------------------------------------------------------------- inspect
def test_inspect_says_what_a_sqlite_file_holds_and_changes_nothing(tmp_path):
    store = _results_store(tmp_path / "results.sqlite")
    _sqlite(store, f"UPDATE runs SET schema_version = {SCHEMA_VERSION + 4}")
    optuna_db = _optuna_storage(tmp_path / "optuna.sqlite")
    view = _sqlite(tmp_path / "view.sqlite", "CREATE TABLE t (key TEXT)",
                   "CREATE VIEW runs AS SELECT * FROM t")
    (tmp_path / "empty.sqlite").touch()
    files = [store, optuna_db, view, tmp_path / "empty.sqlite"]
    before = [_fingerprint(p) for p in files]

    found = databases.inspect(store)
    assert (found.kind, found.schema_version, found.writable) == ("results", SCHEMA_VERSION + 4, True)
    found = databases.inspect(f"sqlite:///{optuna_db}")
    assert (found.kind, found.optuna_version, found.optuna_revision) == \
        ("optuna", optuna.__version__, tuning_storage.optuna_revisions()[0])
    found = databases.inspect(view)
    assert found.kind == "foreign" and found.views == ("runs",) and "'runs' is a view" in found.describe()
    assert databases.inspect(tmp_path / "empty.sqlite").kind == "empty"
    assert databases.inspect(tmp_path / "new" / "x.sqlite").kind == "new"
    assert [_fingerprint(p) for p in files] == before
    assert not (tmp_path / "new").exists()


def test_inspect_reads_a_store_in_use_and_a_read_only_file(tmp_path):
    path = tmp_path / "results.sqlite"
    store = ResultStore(path)
    store.put(_result(0))
    holder = sqlite3.connect(path)  # another process's open connection: its -wal/-shm exist
    holder.execute("SELECT count(*) FROM runs").fetchall()
    assert databases.inspect(path).kind == "results"
    holder.close()
    with _read_only(_results_store(tmp_path / "ro.sqlite")) as ro:
        assert databases.inspect(ro).writable is False


def test_an_optuna_storage_another_worker_is_creating_is_joined(tmp_path):
    """Optuna makes its tables in one transaction and stamps its revision a moment later:
    a second worker starting in between joins, it does not call the storage foreign."""
    path = _optuna_storage(tmp_path / "optuna.sqlite")
    _sqlite(path, "DROP TABLE alembic_version", "DELETE FROM version_info")  # the moment before the stamp
    assert databases.inspect(path).describe() == "an Optuna storage (being created)"
    assert tuning.open_study("joined", str(path)).study_name == "joined"
    assert databases.inspect(path).optuna_revision == tuning_storage.optuna_revisions()[0]


# ----------------------------------------------------------------------------- refusals, SQLite
def _hostile_files(tmp_path: Path) -> dict[str, tuple[Path, str, str]]:
    """name -> (file, words of the store's refusal, words of the Optuna storage's refusal)."""
    foreign = _sqlite(tmp_path / "shoes.sqlite", "CREATE TABLE shoes (id INTEGER PRIMARY KEY, brand TEXT)")
    view = _sqlite(tmp_path / "view.sqlite", "CREATE TABLE t (key TEXT PRIMARY KEY)",
                   "CREATE VIEW runs AS SELECT * FROM t")
    nokey = _sqlite(tmp_path / "nokey.sqlite", "CREATE TABLE runs (key TEXT, created_at REAL, schema_version "
                    "INT, config_json TEXT, history_json TEXT, diagnostics_json TEXT)")
    fake = _sqlite(tmp_path / "fake-optuna.sqlite", "CREATE TABLE studies (x INT)",
                   "CREATE TABLE version_info (x INT)", "CREATE TABLE alembic_version (x INT)")
    newer = _results_store(tmp_path / "newer.sqlite")
    _sqlite(newer, f"UPDATE runs SET schema_version = {SCHEMA_VERSION + 1}")
    results = _results_store(tmp_path / "results.sqlite")
    junk = _results_store(tmp_path / "junk-version.sqlite")
    _sqlite(junk, "UPDATE runs SET schema_version = 'junk'")
    half = _sqlite(tmp_path / "optuna13.sqlite",  # a newer Optuna's file before its revision stamp
                   "CREATE TABLE studies (study_id INTEGER PRIMARY KEY, study_name VARCHAR(512))",
                   "CREATE TABLE version_info (version_info_id INTEGER PRIMARY KEY, schema_version INTEGER, "
                   "library_version VARCHAR(256))", "INSERT INTO version_info VALUES (1, 13, '6.0.0')")
    alike = _optuna_storage(tmp_path / "optuna-alike.sqlite")
    _sqlite(alike, "ALTER TABLE trials DROP COLUMN datetime_start")
    marked = _sqlite(tmp_path / "marked.sqlite", "PRAGMA user_version = 99")  # no tables: not empty
    app_id = _sqlite(tmp_path / "app-id.sqlite", "PRAGMA application_id = 1196444487")
    return {
        "marked, no tables": (marked, "marked by another program: user_version 99", "user_version 99"),
        "application id, no tables": (app_id, "application_id 1196444487", "application_id 1196444487"),
        "foreign": (foreign, "another program's database (tables: shoes)", "another program's database"),
        "view": (view, "its 'runs' is a view, not a table", "its 'runs' is a view"),
        "runs without its key": (nokey, "no primary key on 'key'", "another program's database"),
        "fake optuna": (fake, "another program's database", "Optuna's table names, not its columns"),
        "optuna": (_optuna_storage(tmp_path / "optuna.sqlite"), "it holds an Optuna storage (made by "
                   f"Optuna {optuna.__version__}", "(never refused)"),
        "newer optuna": (_optuna_storage(tmp_path / "optuna9.sqlite", "9.0.0", "v9.0.0.a"),
                         "Optuna storage (made by Optuna 9.0.0",
                         "made by Optuna 9.0.0 (schema v9.0.0.a), newer"),
        "newer optuna, no revision yet": (half, "Optuna storage (made by Optuna 6.0.0, schema 13)",
                                          "made by Optuna 6.0.0 (schema 13), newer"),
        "optuna tables without optuna's columns": (alike, "it holds an Optuna storage",
                                                   "its table 'trials' lacks datetime_start"),
        "junk schema version": (junk, "a damaged database (its 'runs' table has a schema_version that is "
                                "not a whole number ('junk'))", "is a damaged database"),
        "newer store": (newer, f"newer version of this program (schema {SCHEMA_VERSION + 1}",
                        "is the DropEdge results store"),
        "results store": (results, "(never refused)", "is the DropEdge results store, not an Optuna storage"),
    }


def test_hostile_sqlite_files_are_refused_in_one_line_and_left_byte_for_byte(tmp_path, capsys):
    cases = _hostile_files(tmp_path)
    before = {name: _fingerprint(path) for name, (path, _, _) in cases.items()}
    for name, (path, as_store, as_storage) in cases.items():
        if not as_store.startswith("(never"):
            with pytest.raises(StoreError, match="nothing was changed") as info:
                ResultStore(path)
            assert as_store in str(info.value), name
            line = refused_line(capsys, *SWEEP, "--store", path)
            assert str(path) in line and as_store in line, name
        if not as_storage.startswith("(never"):
            with pytest.raises(tuning.TuningError, match="nothing was written") as info:
                tuning.check_storage(str(path))
            assert as_storage in str(info.value), name
            line = refused_line(capsys, *TUNE, "--storage", path)
            assert str(path) in line and as_storage in line, name
        assert _fingerprint(path) == before[name], name


def test_read_only_files_are_refused_before_anything_is_written(tmp_path, capsys):
    with _read_only(_results_store(tmp_path / "results.sqlite")) as store:
        before = _fingerprint(store)
        line = refused_line(capsys, *SWEEP, "--store", store)
        assert "results.sqlite' is read-only here" in line
        assert _fingerprint(store) == before
    with _read_only(_optuna_storage(tmp_path / "optuna.sqlite")) as storage:
        before = _fingerprint(storage)
        assert "optuna.sqlite' is read-only" in refused_line(capsys, *TUNE, "--storage", storage)
        assert _fingerprint(storage) == before


def test_one_file_as_both_store_and_storage_is_refused_before_either_is_made(tmp_path, capsys):
    both = tmp_path / "both.sqlite"
    line = refused_line(capsys, "search", "--dataset", "karate", "--layers", "2", "--samplers", "dropedge",
                "--trials", "1", "--store", both, "--storage", f"sqlite:///{both}")
    assert "name one database" in line and str(both) in line
    assert not both.exists()


# ----------------------------------------------------------------------------- locations
HOSTILE_LOCATIONS = {
    "no slashes": ("postgresql:me@127.0.0.1:54329/results", "slash missing"),
    "sqlite one slash": ("sqlite:/x.sqlite", "slash missing"),
    "sqlite two slashes": ("sqlite://x.sqlite", "needs three slashes"),
    "long name": ("/tmp/" + "n" * 300 + "/r.sqlite", "name longer than"),
    "long path": ("/tmp/" + "/".join(["d" * 200] * 30), "longer than"),
    "long URL": ("postgresql://me@h/" + "x" * 10_000, "longer than 4096 characters"),
    "unknown scheme": ("foo://host/db", "unknown database URL scheme 'foo://'"),
    "empty": ("   ", "empty location"),
    "newline": ("sqlite:/x\nerror: forged second line", "slash missing"),
    "in memory": (":memory:", "':memory:' is an in-memory database, gone when the process ends"),
    "sqlite in memory": ("sqlite:///:memory:", "is an in-memory database"),
    "sqlite URI read-only": ("sqlite:///file:/tmp/x.sqlite?mode=ro&uri=true", "has options after '?'"),
    "sqlite immutable": ("sqlite:///x.sqlite?immutable=1", "has options after '?'"),
    "sqlite URI as a path": ("file:x.sqlite?mode=ro", "is a SQLite URI ('file:...')"),
    "port not a number": ("postgresql://me:s3cret@127.0.0.1:abc/db", "the port 'abc' in "
                          "'postgresql://me:***@127.0.0.1:abc/db' is not a number in 1..65535"),
    "password with an unencoded @": ("postgresql://me:s3@c/r?e#t@127.0.0.1:5432/db",
                                     "the user name or password in 'postgresql://me:***@127.0.0.1:5432/db' "
                                     "holds an unencoded '@', '/', '?' or '#'"),
}


@pytest.mark.parametrize("name", sorted(HOSTILE_LOCATIONS))
def test_hostile_locations_are_one_bounded_line_everywhere(name, tmp_path, capsys, monkeypatch):
    value, words = HOSTILE_LOCATIONS[name]
    monkeypatch.chdir(tmp_path)
    with pytest.raises(locations.LocationError) as info:
        locations.parse(value)
    assert words in str(info.value)
    uses = [(["--store", value], SWEEP, {}), (["--storage", value], TUNE, {}),
            ([], SWEEP, {"DROPEDGE_RESULTS": value}), ([], TUNE, {"DROPEDGE_TUNING_STORAGE": value})]
    for flag, command, environ in uses:
        if not value.strip() and environ:
            continue  # an empty variable means the default
        for key, text in environ.items():
            monkeypatch.setenv(key, text)
        line = refused_line(capsys, *command, *flag)
        for key in environ:
            monkeypatch.delenv(key)
        assert words in line and len(line) < 400, (flag, environ, line[:300])
        assert "s3cret" not in line and "s3@c" not in line
    assert list(tmp_path.iterdir()) == []  # no folder named after a URL


def test_a_nul_byte_is_one_line_not_a_traceback(tmp_path, capsys):
    assert "NUL character" in refused_line(capsys, *SWEEP, "--store", tmp_path / "r\x00.sqlite")
    assert "NUL character" in refused_line(capsys, *TUNE, "--storage", f"sqlite:///{tmp_path}/t\x00.sqlite")


def test_a_tilde_is_the_home_folder(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    assert locations.parse("~/r.sqlite").file == tmp_path / "r.sqlite"
    assert locations.parse("sqlite:///~/r.sqlite").file == tmp_path / "r.sqlite"
    monkeypatch.setenv("DROPEDGE_RESULTS", "~/store.sqlite")
    assert ResultStore().path == tmp_path / "store.sqlite"
    assert tuning.check_storage("~/t.sqlite") == f"sqlite:///{tmp_path / 't.sqlite'}"
    assert not (Path.cwd() / "~").exists()


def test_a_server_url_keeps_its_password_out_of_messages():
    location = locations.parse("postgres://me:s3cret@db.lab:5433/results")
    assert location.url.drivername == "postgresql+psycopg" and location.url.password == "s3cret"
    assert "s3cret" not in location.display and "s3cret" in location.target
    with pytest.raises(StoreError) as info:
        ResultStore("postgresql://me:s3cret@127.0.0.1:1/results")
    assert "s3cret" not in str(info.value) and "***" in str(info.value)


# ----------------------------------------------------------------------------- PostgreSQL
def test_a_password_in_the_query_is_hidden_in_every_line_and_record(pg, capsys):
    """libpq takes ``?password=`` (any case) as well as ``user:password@``: hidden on stdout,
    in error lines and in what is kept (the store's path, the storage in --json)."""
    from tests.helpers.runs import run_cli

    store = pg.new_database() + "?password=s3cret"
    code, out, err = run_cli(capsys, *SWEEP, "--store", store)
    assert code == 0 and "s3cret" not in out + err and "password=***" in out, err
    assert "s3cret" not in str(ResultStore(store).path)
    storage = pg.new_database() + "?sslmode=disable&password=s3cret"
    code, out, err = run_cli(capsys, *TUNE, "--storage", storage, "--json")
    assert code == 0 and "s3cret" not in out + err and "password=***" in out, err
    code, out, err = run_cli(capsys, *TUNE, "--storage", storage)
    assert code == 0 and "s3cret" not in out + err and "password=***" in out, err
    for query in ("?PassWord=s3cret", "?sslpassword=s3cret&password=s3cret"):
        line = refused_line(capsys, *SWEEP, "--store", f"postgresql://me@127.0.0.1:1/db{query}")
        assert "s3cret" not in line and "password=***" in line.lower()


def _dump(pg: PostgresServer, url: str) -> str:
    """``pg_dump`` of the database: schema and rows (its header has no timestamp; the random
    ``\\restrict`` key of newer pg_dumps is left out)."""
    name = sa.make_url(url).database
    proc = subprocess.run([str(pg.bin_dir / "pg_dump"), "-h", "127.0.0.1", "-p", str(pg.port), "-U", pg.USER,
                           "--no-owner", name], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    keys = ("\\restrict", "\\unrestrict")
    return "\n".join(line for line in proc.stdout.splitlines() if not line.startswith(keys))


def _execute(url: str, *sql: str) -> None:
    engine = sa.create_engine(url.replace("postgresql://", "postgresql+psycopg://"))
    with engine.begin() as conn:
        for statement in sql:
            conn.exec_driver_sql(statement)
    engine.dispose()


def test_hostile_postgresql_databases_are_left_as_they_were(pg, capsys):
    view = pg.new_database()
    _execute(view, "CREATE TABLE t (key text PRIMARY KEY)", "CREATE VIEW runs AS SELECT * FROM t")
    results = pg.new_database()
    ResultStore(results).put(_result(0))
    newer = pg.new_database()
    ResultStore(newer).put(_result(1))
    _execute(newer, f"UPDATE runs SET schema_version = {SCHEMA_VERSION + 1}")
    theirs = pg.new_database()
    optuna.create_study(study_name="theirs", storage=tuning.check_storage(theirs))
    newer_optuna = pg.new_database()
    optuna.create_study(study_name="theirs", storage=tuning.check_storage(newer_optuna))
    _execute(newer_optuna, "UPDATE alembic_version SET version_num = 'v9.0.0.a'")
    cases = [(view, "store", "its 'runs' is a view"), (view, "storage", "its 'runs' is a view"),
             (newer, "store", f"schema {SCHEMA_VERSION + 1}"),
             (theirs, "store", "it holds an Optuna storage"),
             (results, "storage", "is the DropEdge results store"), (newer_optuna, "storage", "newer than")]
    for url, role, words in cases:
        before = _dump(pg, url)
        argv = [*SWEEP, "--store", url] if role == "store" else [*TUNE, "--storage", url]
        line = refused_line(capsys, *argv)
        assert words in line and sa.make_url(url).database in line, line
        assert _dump(pg, url) == before, (role, words)
    assert len(ResultStore(results)) == 1 and ResultStore(results).has(run_key(_result(0).config))


def test_a_database_this_role_cannot_write_is_refused(pg, capsys):
    url = pg.new_database()
    _execute(pg.url(), "DO $$ BEGIN CREATE ROLE reader LOGIN; "
             "EXCEPTION WHEN duplicate_object THEN NULL; END $$")
    _execute(url, "REVOKE CREATE ON SCHEMA public FROM PUBLIC")  # PostgreSQL 15's default, said here
    reader = url.replace(f"{pg.USER}@", "reader@")
    assert databases.inspect(reader).writable is False and databases.inspect(url).writable is True
    before = _dump(pg, url)
    assert "is read-only here" in refused_line(capsys, *SWEEP, "--store", reader)
    assert "is read-only" in refused_line(capsys, *TUNE, "--storage", reader)
    assert _dump(pg, url) == before


def test_the_pages_show_a_malformed_location_in_one_line(monkeypatch, tmp_path):
    from streamlit.testing.v1 import AppTest

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("DROPEDGE_RESULTS", "postgresql:me@127.0.0.1:54329/results")
    monkeypatch.setenv("DROPEDGE_TUNING_STORAGE", "sqlite:/x.sqlite")
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    for page, name in (("app_pages/depth_study.py", "DROPEDGE_RESULTS"),
                       ("app_pages/tuning.py", "DROPEDGE_TUNING_STORAGE")):
        at.switch_page(page).run()
        assert not at.exception, [e.value for e in at.exception]
        shown = [e.value for e in at.error if "slash missing" in e.value]
        assert len(shown) == 1 and name in shown[0] and "\n" not in shown[0], [e.value for e in at.error]
    assert list(tmp_path.iterdir()) == []


def test_a_table_creation_race_is_told_from_other_errors(tmp_path):
    """Two workers creating Optuna's tables at once: the loser's "already exists" (bare or
    wrapped by SQLAlchemy) and SQLite's "locked" are a race to retry; "no such table" is not."""
    path = tmp_path / "a.sqlite"
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("CREATE TABLE t (x)")

    def raised(work) -> sqlite3.Error:
        with pytest.raises(sqlite3.Error) as info:
            work()
        return info.value

    exists = raised(lambda: db.execute("CREATE TABLE t (x)"))
    missing = raised(lambda: db.execute("SELECT * FROM u"))
    db.execute("BEGIN EXCLUSIVE")
    locked = raised(lambda: sqlite3.connect(path, timeout=0).execute("SELECT * FROM t"))
    db.execute("ROLLBACK")
    wrapped = sa.exc.OperationalError("CREATE TABLE t (x)", {}, exists)
    races = [databases.creation_race(e) for e in (exists, wrapped, locked, missing)]
    assert races == [True, True, True, False]
