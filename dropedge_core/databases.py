"""Where a database lives: a SQLite file path, or a server URL (PostgreSQL), for the
results store (:mod:`dropedge_core.store`) and the Optuna storage (:mod:`dropedge_core.studies.tuning`).

One place turns what a user typed into something SQLAlchemy can open, and every way that
can fail into one line (:class:`DatabaseError`, a ``ValueError``: the CLI's exit 2, the
app's ``st.error``): an unknown scheme, a driver that is not installed, a server that
refuses. ``postgresql://`` means psycopg 3 (``postgresql+psycopg://``), the driver in
``requirements.txt``; SQLAlchemy's own default for that scheme, psycopg2, is not needed.

Example:
    >>> is_url("postgresql://me@db.lab:5432/dropedge"), is_url("results/results.sqlite")
    (True, False)
    >>> server_url("postgresql://me:secret@db.lab/dropedge").drivername
    'postgresql+psycopg'
"""
from __future__ import annotations

import re
from pathlib import Path

from sqlalchemy import URL, create_engine, make_url
from sqlalchemy.engine import Engine
from sqlalchemy.exc import ArgumentError, NoSuchModuleError

#: Schemes a user may write for PostgreSQL, and the SQLAlchemy driver each means.
POSTGRES_SCHEMES = {"postgresql": "postgresql+psycopg", "postgres": "postgresql+psycopg",
                    "postgresql+psycopg": "postgresql+psycopg"}
#: Seconds to wait for a server to answer before saying it does not.
CONNECT_TIMEOUT = 10


class DatabaseError(ValueError):
    """A database location that cannot be used, in one line."""


def is_url(target: object) -> bool:
    """Whether ``target`` is a URL (``scheme://...``) rather than a file path."""
    return isinstance(target, str) and "://" in target


def sqlite_path(target: str | Path) -> Path | None:
    """The file of a SQLite location (a path or ``sqlite:///path``); ``None`` for a
    server URL. ``sqlite:///:memory:`` gives ``Path(":memory:")``."""
    if isinstance(target, Path):
        return target.expanduser()
    text = str(target).strip()
    if not is_url(text):
        if re.match(r"[A-Za-z][A-Za-z0-9+.-]+:/", text):  # 'postgresql:/host/db': not a folder named so
            raise DatabaseError(f"{text!r} looks like a database URL with a slash missing; "
                                "write scheme://user@host:port/database, or give a file path")
        return Path(text).expanduser()
    if text.startswith("sqlite:///"):
        return Path(text[len("sqlite:///"):]).expanduser()
    if text.split("://", 1)[0].lower() in ("sqlite", "sqlite+pysqlite"):
        raise DatabaseError(f"SQLite URL {text!r} needs three slashes and a file: sqlite:///path/to/file.sqlite")
    return None


def display(url: URL | str) -> str:
    """The URL as text with its password hidden (for messages and reports)."""
    if isinstance(url, str):
        try:
            url = make_url(url)
        except ArgumentError:
            return url
    return url.render_as_string(hide_password=True)


def server_url(text: str, allowed: tuple[str, ...] | None = None) -> URL:
    """Parse a server URL; ``postgresql://`` becomes ``postgresql+psycopg://``.

    Args:
        text: ``scheme://user[:password]@host[:port]/database``.
        allowed: backend names accepted (``("postgresql",)``); ``None``: any that
            SQLAlchemy knows.

    Raises:
        DatabaseError: not a URL, an unknown or unsupported scheme, or its driver is not
            installed (the message says what to install).
    """
    try:
        url = make_url(text)
    except ArgumentError:
        raise DatabaseError(f"{text!r} is not a database URL (scheme://user@host:port/database)") from None
    scheme = url.drivername.lower()
    if scheme in POSTGRES_SCHEMES:
        url = url.set(drivername=POSTGRES_SCHEMES[scheme])
    try:
        dialect = url.get_dialect()
    except NoSuchModuleError:
        valid = "postgresql://" if allowed == ("postgresql",) else "postgresql://, mysql://"
        raise DatabaseError(f"unknown database URL scheme {scheme + '://'!r} in {display(url)!r}; valid: "
                            f"{valid}... or a SQLite file path") from None
    backend = url.get_backend_name()
    if allowed is not None and backend not in allowed:
        raise DatabaseError(f"{backend} URLs are not supported here ({display(url)!r}); valid: "
                            + ", ".join(f"{a}://..." for a in allowed) + " or a SQLite file path")
    try:
        dialect.import_dbapi()
    except ImportError as exc:
        hint = " (pip install 'psycopg[binary]')" if backend == "postgresql" else ""
        raise DatabaseError(f"the database driver for {scheme}:// URLs is not installed: "
                            f"{exc.name or exc}{hint}") from None
    return url


def server_engine(url: URL, pool_size: int = 2) -> Engine:
    """An engine on a server: connections checked before use (a restarted server or a
    dropped connection is reconnected, not an error), a bounded connect wait."""
    args = {"connect_timeout": CONNECT_TIMEOUT} if url.get_backend_name() == "postgresql" else {}
    return create_engine(url, pool_pre_ping=True, pool_size=pool_size, max_overflow=4, connect_args=args)


def error_line(exc: BaseException) -> str:
    """The first meaningful line of a driver's error (psycopg puts details on later lines)."""
    orig = getattr(exc, "orig", None) or exc
    lines = [line.strip() for line in str(orig).splitlines() if line.strip()]
    return lines[0] if lines else type(orig).__name__


__all__ = ["CONNECT_TIMEOUT", "DatabaseError", "POSTGRES_SCHEMES", "display", "error_line", "is_url",
           "server_engine", "server_url", "sqlite_path"]
