"""A PostgreSQL role that may write rows but not create or alter tables (issue 29, class 4):
what each use of a server database needs beyond ``SELECT, INSERT, UPDATE, DELETE`` is checked
read-only before anything is written (:func:`dropedge_explorer.databases.missing_privilege`).

* the results store on an empty database creates ``runs`` and ``claims`` (``CREATE`` on the
  schema); a store made before a config field existed gets a column (``ALTER``: ownership);
  a store at the current schema needs row privileges only;
* an Optuna storage: Optuna creates its tables on first use (``CREATE``) and numbers its
  studies and trials from sequences (``USAGE`` on them).

Real roles on the test server; a refusal is exit 2 with one ``error:`` line naming the
database (password as ``***``) and the privilege, and a ``pg_dump`` (rows, grants, owners)
is the same before and after.
"""
from __future__ import annotations

import hashlib
import json

import optuna
import sqlalchemy as sa

from dropedge_explorer import cli, databases
from dropedge_explorer.store import ResultStore
from dropedge_explorer.studies import tuning
from dropedge_explorer.training import RunResult, TrainConfig
from tests.helpers.runs import refused_line

SWEEP = ["sweep", "--dataset", "karate", "--samplers", "nodrop", "--layers", "2", "--epochs", "2",
         "--hidden", "8", "--diag-every", "0", "--seeds", "0", "1", "--json", "--no-progress"]
TUNE = ["tune", "--dataset", "karate", "--trials", "1", "--epochs", "2", "--no-progress"]
ROWS = "GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO {role}"
NO_CREATE = "REVOKE CREATE ON SCHEMA public FROM PUBLIC"  # PostgreSQL 15's default, said here


def _result(seed: int) -> RunResult:
    return RunResult(config=TrainConfig(dataset="karate", seed=seed), reason="finished", message="",
                     best_epoch=1, best_val_acc=0.5, test_acc=0.4, epochs_run=1, total_time=0.1,
                     device="cpu", history=[], diagnostics=[])



def _count(pg, url: str) -> int:
    engine = sa.create_engine(url.replace("postgresql://", "postgresql+psycopg://"))
    with engine.connect() as conn:
        n = conn.exec_driver_sql("SELECT count(*) FROM runs").scalar()
    engine.dispose()
    return int(n)


def _shown(url: str) -> str:
    """The database as a message shows it: its name, the role, the password hidden."""
    return f"{sa.make_url(url).username}:***@127.0.0.1:{sa.make_url(url).port}/{sa.make_url(url).database}"


def test_a_row_only_role_writes_runs_to_a_current_store(pg, capsys):
    url = pg.new_database()
    ResultStore(url).put(_result(0))  # made by its owner, at the current schema
    pg.execute(url, NO_CREATE)
    writer = pg.role("rows_only", url, ROWS.format(role="rows_only"))
    contents = databases.inspect(writer)
    assert contents.grants.create is False and contents.grants.owned == frozenset()
    assert databases.missing_privilege(contents, ("runs", "claims")) is None
    assert cli.main(SWEEP + ["--store", writer]) == 0, capsys.readouterr().err
    capsys.readouterr()
    assert _count(pg, url) == 3  # the owner's run and the role's two (a sweep of 2 epochs)


def test_a_role_lacking_one_row_privilege_is_refused(pg, capsys):
    """``has_table_privilege(t, 'INSERT,UPDATE')`` is true when *any* is held: each is asked alone."""
    url = pg.new_database()
    ResultStore(url).put(_result(0))
    pg.execute(url, NO_CREATE)
    writer = pg.role("insert_only", url, "GRANT SELECT, INSERT ON ALL TABLES IN SCHEMA public TO insert_only")
    before = pg.dump(url)
    line = refused_line(capsys, *SWEEP, "--store", writer)
    assert "lacks UPDATE, DELETE on table 'claims'" in line and _shown(writer) in line, line
    assert "s3cret" not in line and pg.dump(url) == before


def _schema_1_store(pg, url: str) -> None:
    """A store as a program before recipes wrote it: no ``recipe`` column, schema-1 rows
    keyed by the config with ``diag_every`` and ``device`` (tests/store/test_store.py)."""
    result = _result(0)
    ResultStore(url).put(result)
    legacy = result.config.to_dict()
    legacy.pop("recipe")
    text = json.dumps(legacy, sort_keys=True, separators=(",", ":"))
    key = hashlib.sha256(text.encode()).hexdigest()
    pg.execute(url, "ALTER TABLE runs DROP COLUMN recipe",
               f"UPDATE runs SET key = '{key}', config_json = '{text}', schema_version = 1")


def test_a_row_only_role_cannot_upgrade_an_older_store(pg, capsys):
    url = pg.new_database()
    _schema_1_store(pg, url)
    pg.execute(url, NO_CREATE)
    writer = pg.role("rows_old", url, ROWS.format(role="rows_old"))
    before = pg.dump(url)
    line = refused_line(capsys, *SWEEP, "--store", writer)
    assert "role 'rows_old'" in line and "lacks ownership of table 'runs'" in line, line
    assert _shown(writer) in line and "s3cret" not in line, line
    assert pg.dump(url) == before
    # its owner upgrades it (the column added, the row re-keyed); then the row-only role works
    owner = ResultStore(url)
    assert len(owner) == 1 and owner.to_frame()["recipe"].notna().all()
    assert cli.main(SWEEP + ["--store", writer]) == 0, capsys.readouterr().err
    capsys.readouterr()
    assert _count(pg, url) == 3


def test_a_role_without_create_is_refused_on_an_empty_database(pg, capsys):
    url = pg.new_database()
    pg.execute(url, NO_CREATE)
    reader = pg.role("no_create", url)
    before = pg.dump(url)
    line = refused_line(capsys, *SWEEP, "--store", reader)
    assert "lacks CREATE on schema 'public' (to create the tables claims, runs)" in line, line
    assert _shown(reader) in line and "s3cret" not in line, line
    line = refused_line(capsys, *TUNE, "--storage", reader)
    assert "Optuna storage" in line and "lacks CREATE on schema 'public'" in line, line
    assert _shown(reader) in line and "Traceback" not in line, line
    assert pg.dump(url) == before


def test_optuna_storage_needs_its_sequences_and_its_missing_tables(pg, capsys):
    url = pg.new_database()
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    optuna.create_study(study_name="theirs", storage=tuning.check_storage(url))
    pg.execute(url, NO_CREATE)
    writer = pg.role("rows_optuna", url, ROWS.format(role="rows_optuna"))
    before = pg.dump(url)
    line = refused_line(capsys, *TUNE, "--storage", writer)
    assert "lacks USAGE on sequence 'studies_study_id_seq'" in line and _shown(writer) in line, line
    assert pg.dump(url) == before
    pg.execute(url, "GRANT USAGE ON ALL SEQUENCES IN SCHEMA public TO rows_optuna")
    assert cli.main(TUNE + ["--storage", writer]) == 0, capsys.readouterr().err
    capsys.readouterr()
    # a storage missing one of Optuna's tables (an older Optuna's) needs CREATE to add it
    pg.execute(url, "DROP TABLE trial_heartbeats")
    before = pg.dump(url)
    line = refused_line(capsys, *TUNE, "--storage", writer)
    assert "lacks CREATE on schema 'public' (to create the tables trial_heartbeats)" in line, line
    assert pg.dump(url) == before


def test_the_pages_refuse_a_role_without_create_in_one_line(pg, monkeypatch, tmp_path):
    from tests.helpers.app import _app, _ok
    from tests.helpers.app import depth_page as _page

    url = pg.new_database()
    pg.execute(url, NO_CREATE)
    reader = pg.role("no_create_app", url)
    before = pg.dump(url)
    monkeypatch.setattr("dropedge_explorer.studies.run_tables.BUNDLED_DIR", tmp_path / "bundled")
    monkeypatch.setenv("DROPEDGE_RESULTS", reader)
    monkeypatch.setenv("DROPEDGE_TUNING_STORAGE", reader)
    at = _page(depths=(2,), seeds=1)
    _ok(at)
    shown = [e.value for e in at.error if "lacks CREATE on schema 'public'" in e.value]
    assert len(shown) == 1 and "\n" not in shown[0] and "s3cret" not in shown[0], [e.value for e in at.error]
    at = _app()
    at.switch_page("app_pages/tuning.py").run()
    _ok(at)
    shown = [e.value for e in at.error if "lacks CREATE on schema 'public'" in e.value]
    assert len(shown) == 1 and "s3cret" not in shown[0], [e.value for e in at.error]
    assert pg.dump(url) == before
