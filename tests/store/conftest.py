"""The store tests' PostgreSQL: one throwaway server per module (Debian's initdb/pg_ctl),
skipped with the reason where the binaries are missing (CI installs them)."""
from __future__ import annotations

import pytest

from tests.helpers.postgres import PostgresServer, find_bin_dir


@pytest.fixture(scope="module")
def pg():
    bin_dir = find_bin_dir()
    if bin_dir is None:
        pytest.skip("no PostgreSQL server binaries (initdb, pg_ctl): apt-get install postgresql")
    server = PostgresServer(bin_dir).start()
    yield server
    server.stop()
