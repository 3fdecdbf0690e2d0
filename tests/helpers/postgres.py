"""A throwaway PostgreSQL server for tests: ``initdb`` + ``pg_ctl`` in a temporary
folder, listening on a free loopback port, stopped and deleted afterwards.

The binaries come from ``$DROPEDGE_PG_BIN``, Debian's ``/usr/lib/postgresql/<version>/bin``
(``apt-get install postgresql``; ``.ci/run`` installs it) or ``initdb`` on the ``PATH``.
PostgreSQL refuses to run as root: when the tests run as root (CI), the cluster belongs to
the ``postgres`` user (created by Debian's package) and its commands run through
``runuser``. The tests that need it skip, saying why, only when no binaries exist.
"""
from __future__ import annotations

import contextlib
import glob
import os
import pwd
import shutil
import subprocess
import tempfile
import uuid
from pathlib import Path

from tests.helpers.servers import free_port


def find_bin_dir() -> Path | None:
    """The folder holding ``initdb`` and ``pg_ctl`` (the newest Debian version first)."""
    candidates = [os.environ.get("DROPEDGE_PG_BIN", "")]
    candidates += sorted(glob.glob("/usr/lib/postgresql/*/bin"),
                         key=lambda d: [int(p) for p in Path(d).parent.name.split(".") if p.isdigit()],
                         reverse=True)
    found = shutil.which("initdb")
    if found:
        candidates.append(str(Path(found).resolve().parent))
    for folder in candidates:
        if folder and (Path(folder) / "initdb").is_file() and (Path(folder) / "pg_ctl").is_file():
            return Path(folder)
    return None


class PostgresServer:
    """One cluster; :meth:`new_database` gives each test its own empty database."""

    USER = "dropedge"

    def __init__(self, bin_dir: Path):
        self.bin_dir = bin_dir
        self.root = Path(tempfile.mkdtemp(prefix="dropedge-pg-"))
        self.data, self.sock, self.log = self.root / "data", self.root / "sock", self.root / "server.log"
        self.sock.mkdir()
        self.port = free_port()
        self.prefix: list[str] = []
        if os.geteuid() == 0:  # postgres refuses root: run the cluster as the postgres user
            user = pwd.getpwnam("postgres")
            for path in (self.root, self.sock):
                os.chown(path, user.pw_uid, user.pw_gid)
            runuser = shutil.which("runuser")
            self.prefix = ([runuser, "-u", "postgres", "--"] if runuser
                           else ["su", "postgres", "-s", "/bin/sh", "-c"])

    def _run(self, *argv: str) -> None:
        cmd = [str(self.bin_dir / argv[0]), *argv[1:]]
        if self.prefix[:1] == ["su"]:
            cmd = [*self.prefix, " ".join(f"'{a}'" for a in cmd)]
        else:
            cmd = [*self.prefix, *cmd]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        if proc.returncode != 0:
            log = self.log.read_text()[-2000:] if self.log.exists() else ""
            raise RuntimeError(f"{' '.join(argv[:2])} failed: {proc.stderr[-2000:]}{log}")

    def start(self) -> PostgresServer:
        self._run("initdb", "-D", str(self.data), "-U", self.USER, "-A", "trust", "-E", "UTF8",
                  "--no-sync", "--no-instructions")
        self.resume()
        return self

    def resume(self) -> None:
        """Start the cluster's server (again, after :meth:`pause`)."""
        options = (f"-F -p {self.port} -c listen_addresses=127.0.0.1 -k {self.sock} "
                   "-c max_connections=60 -c shared_buffers=16MB")
        self._run("pg_ctl", "-D", str(self.data), "-l", str(self.log), "-o", options, "-w", "-t", "60",
                  "start")

    def pause(self) -> None:
        """Stop the server, keeping its data (a server down for a while)."""
        self._run("pg_ctl", "-D", str(self.data), "-m", "fast", "-w", "stop")

    def stop(self) -> None:
        with contextlib.suppress(Exception):
            self._run("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop")
        shutil.rmtree(self.root, ignore_errors=True)

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://{self.USER}@127.0.0.1:{self.port}/{database}"

    def new_database(self) -> str:
        """A new empty database; its URL."""
        import sqlalchemy as sa

        name = f"t_{uuid.uuid4().hex[:12]}"
        engine = sa.create_engine(self.url().replace("postgresql://", "postgresql+psycopg://"),
                                  isolation_level="AUTOCOMMIT")
        with engine.connect() as conn:
            conn.exec_driver_sql(f"CREATE DATABASE {name}")
        engine.dispose()
        return self.url(name)

    def execute(self, url: str, *sql: str) -> None:
        """Run SQL statements in one transaction as the cluster's superuser (or ``url``'s role)."""
        import sqlalchemy as sa

        engine = sa.create_engine(url.replace("postgresql://", "postgresql+psycopg://"))
        with engine.begin() as conn:
            for statement in sql:
                conn.exec_driver_sql(statement)
        engine.dispose()

    def dump(self, url: str) -> str:
        """``pg_dump`` of the database: schema, rows and grants (its header has no timestamp;
        the random ``\\restrict`` key of newer pg_dumps is left out)."""
        import sqlalchemy as sa

        proc = subprocess.run([str(self.bin_dir / "pg_dump"), "-h", "127.0.0.1", "-p", str(self.port),
                               "-U", self.USER, sa.make_url(url).database],
                              capture_output=True, text=True, timeout=60)
        if proc.returncode != 0:
            raise RuntimeError(f"pg_dump failed: {proc.stderr[-2000:]}")
        keys = ("\\restrict", "\\unrestrict")
        return "\n".join(line for line in proc.stdout.splitlines() if not line.startswith(keys))

    def role(self, name: str, url: str, grants: str = "") -> str:
        """A login role (made once per cluster) and ``url`` as that role, with a password
        (the cluster trusts every role: the password only shows how messages hide it)."""
        self.execute(self.url(), f"DO $$ BEGIN CREATE ROLE {name} LOGIN; "
                     "EXCEPTION WHEN duplicate_object THEN NULL; END $$")
        if grants:
            self.execute(url, grants)
        return url.replace(f"{self.USER}@", f"{name}:s3cret@")

