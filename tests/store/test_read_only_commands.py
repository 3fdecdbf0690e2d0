"""A command that only reads a results store never creates its tables (issue 48): ``export``
and ``reproduce --dry-run`` from an empty PostgreSQL database (a throwaway cluster,
:mod:`tests.helpers.postgres`) and from a 0-byte SQLite file leave them as they were."""
from __future__ import annotations

from tests.helpers.runs import refused_line, run_cli


def test_export_from_an_empty_postgres_database_creates_no_table(capsys, tmp_path, pg):
    url = pg.new_database()
    before = pg.dump(url)
    line = refused_line(capsys, "export", str(tmp_path / "out.csv"), "--store", url)
    assert "holds no runs" in line and "nothing was changed" in line, line
    assert pg.dump(url) == before and "CREATE TABLE" not in before
    assert not (tmp_path / "out.csv").exists()


def test_a_reproduce_dry_run_creates_no_table_in_an_empty_database(capsys, tmp_path, pg):
    url = pg.new_database()
    before = pg.dump(url)
    empty = tmp_path / "empty.sqlite"
    empty.touch()
    for store in (url, str(empty)):
        code, out, err = run_cli(capsys, "reproduce", "--table", "gcn-semi-cora", "--layers", "2",
                                 "--seeds", "1", "--dry-run", "--json", "--store", store)
        assert code == 0, err
    assert pg.dump(url) == before and empty.stat().st_size == 0
