"""Where a database lives, parsed once: a SQLite file path or a server URL.

Every flag and variable that names a results store or an Optuna storage (``--store``,
``--storage``, ``$DROPEDGE_RESULTS``, ``$DROPEDGE_TUNING_STORAGE``, the app's) goes through
:func:`parse`, so each is read the same way and every way it can be wrong is one
:class:`LocationError` line (a ``ValueError``: the CLI's exit 2, the app's ``st.error``)
that shows the value cut (:func:`dropedge_core.echo.bounded`):

* a file path: ``~`` expanded; a component longer than the filesystem allows, a path
  longer than it allows, or a NUL byte refused before any file call raises on it;
* ``sqlite:///path`` (three slashes, ``~`` expanded) is that file;
* a server URL is read by SQLAlchemy's :func:`~sqlalchemy.engine.make_url`;
  ``postgresql://`` means psycopg 3 (``postgresql+psycopg://``), the driver in
  ``requirements.txt``; an unknown scheme, a backend not allowed here, or a driver that is
  not installed is refused;
* a database scheme with its ``//`` missing (``postgresql:me@host/db``, ``sqlite:/x``) is
  refused, not taken for a file of that name.

Example:
    >>> parse("postgresql://me:secret@db.lab/dropedge").display
    'postgresql+psycopg://me:***@db.lab/dropedge'
    >>> parse("sqlite:///results/r.sqlite").file
    PosixPath('results/r.sqlite')
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy import URL, make_url
from sqlalchemy.exc import ArgumentError, NoSuchModuleError

from dropedge_core.echo import bounded

#: Schemes a user may write for PostgreSQL, and the SQLAlchemy driver each means.
POSTGRES_SCHEMES = {"postgresql": "postgresql+psycopg", "postgres": "postgresql+psycopg",
                    "postgresql+psycopg": "postgresql+psycopg"}
#: Database backends whose name before a ``:`` marks a URL, even with its ``//`` missing.
KNOWN_BACKENDS = ("sqlite", "postgresql", "postgres", "mysql", "mariadb", "oracle", "mssql")
#: Longest location text read at all (a URL or a path); longer ones are refused whole.
MAX_LENGTH = 4096


class LocationError(ValueError):
    """A store or storage location that cannot be used, in one line."""


@dataclass(frozen=True)
class Location:
    """A parsed location: exactly one of :attr:`file` (a SQLite file, ``Path(":memory:")``
    for an in-memory database) and :attr:`url` (a server).

    Attributes:
        file: the SQLite file, ``~`` expanded; ``None`` for a server.
        url: the server URL with its driver set; ``None`` for a file.
    """

    file: Path | None = None
    url: URL | None = None

    @property
    def is_server(self) -> bool:
        return self.url is not None

    @property
    def target(self) -> Path | str:
        """What to open: the file, or the URL as text with its password (never show this)."""
        return self.file if self.file is not None else self.url.render_as_string(hide_password=False)

    @property
    def sqlalchemy_url(self) -> str:
        """A URL SQLAlchemy opens: ``sqlite:///file`` or the server URL (password included)."""
        return f"sqlite:///{self.file}" if self.file is not None else self.target

    @property
    def display(self) -> str:
        """For messages: the file, or the URL with its password hidden."""
        return str(self.file) if self.file is not None else self.url.render_as_string(hide_password=True)


def is_url(target: object) -> bool:
    """Whether ``target`` is written as a URL (``scheme://...``) rather than a file path."""
    return isinstance(target, str) and "://" in target


def display(target: object) -> str:
    """Any location as text for a message: a URL's password hidden, the rest cut."""
    if isinstance(target, Location):
        return target.display
    if isinstance(target, URL):
        return target.render_as_string(hide_password=True)
    if is_url(target):
        try:
            return make_url(str(target)).render_as_string(hide_password=True)
        except ArgumentError:
            return bounded(target, quote=False)
    return str(target)


def parse(value: str | Path | Location, what: str = "database location",
          allowed: tuple[str, ...] | None = None) -> Location:
    """Read a store or storage location.

    Args:
        value: a file path (``~`` allowed), ``sqlite:///file``, or
            ``scheme://user[:password]@host[:port]/database``.
        what: what the location is for, named in a refusal (``"--store"``,
            ``"DROPEDGE_RESULTS"``, ``"Optuna storage"``).
        allowed: server backends accepted (``("postgresql",)``); ``None``: any SQLAlchemy knows.

    Raises:
        LocationError: empty, too long, a bad path, a malformed URL, an unknown or
            unsupported scheme, a missing driver (one line).
    """
    if isinstance(value, Location):
        return value
    if isinstance(value, Path):
        return Location(file=_checked_path(str(value), what))
    text = str(value).strip()
    if not text:
        raise LocationError(f"{what}: empty location; give a file path or a database URL")
    if len(text) > MAX_LENGTH:
        raise LocationError(f"{what}: location {bounded(text)} is longer than {MAX_LENGTH} characters")
    if not is_url(text):
        scheme = re.match(r"([A-Za-z][A-Za-z0-9+.-]*):", text)
        if scheme and scheme.group(1).split("+")[0].lower() in KNOWN_BACKENDS:
            raise LocationError(f"{what}: {bounded(display(text))} looks like a database URL with a slash "
                                "missing ('//' after the scheme); write scheme://user@host:port/database, "
                                "or give a file path")
        return Location(file=_checked_path(text, what))
    return _from_url(text, what, allowed)


def _from_url(text: str, what: str, allowed: tuple[str, ...] | None) -> Location:
    try:
        url = make_url(text)
    except (ArgumentError, ValueError):
        raise LocationError(f"{what}: {bounded(display(text))} is not a database URL "
                            "(scheme://user@host:port/database)") from None
    scheme = url.drivername.lower()
    if scheme.split("+")[0] == "sqlite":
        if not text.lower().startswith(f"{scheme}:///") or not url.database:
            raise LocationError(f"{what}: SQLite URL {bounded(text)} needs three slashes and a file: "
                                "sqlite:///path/to/file.sqlite")
        return Location(file=_checked_path(url.database, what))
    url = url.set(drivername=POSTGRES_SCHEMES.get(scheme, url.drivername))
    _check_backend(url, scheme, what, allowed)
    return Location(url=url)


def _check_backend(url: URL, scheme: str, what: str, allowed: tuple[str, ...] | None) -> None:
    """A scheme SQLAlchemy knows, allowed here, whose driver is installed."""
    shown = bounded(url.render_as_string(hide_password=True))
    try:
        dialect = url.get_dialect()
    except NoSuchModuleError:
        valid = "postgresql://" if allowed == ("postgresql",) else "postgresql://, mysql://"
        raise LocationError(f"{what}: unknown database URL scheme {bounded(scheme + '://')} in {shown}; "
                            f"valid: {valid}... or a SQLite file path") from None
    backend = url.get_backend_name()
    if allowed is not None and backend not in allowed:
        raise LocationError(f"{what}: {backend} URLs are not supported here ({shown}); valid: "
                            + ", ".join(f"{a}://..." for a in allowed) + " or a SQLite file path")
    try:
        dialect.import_dbapi()
    except ImportError as exc:
        hint = " (pip install 'psycopg[binary]')" if backend == "postgresql" else ""
        raise LocationError(f"{what}: the database driver for {scheme}:// URLs is not installed: "
                            f"{exc.name or exc}{hint}") from None


def _checked_path(text: str, what: str) -> Path:
    """``text`` as a path, ``~`` expanded; a NUL byte, a component or a whole path longer than
    the filesystem allows refused here (the OS would raise on the first file call)."""
    if "\x00" in text:
        raise LocationError(f"{what}: file path {bounded(text)} contains a NUL character")
    if text == ":memory:":
        return Path(text)
    path = Path(text).expanduser()
    name_max, path_max = _limits(path)
    for part in path.parts:
        if len(os.fsencode(part)) > name_max:
            raise LocationError(f"{what}: file path {bounded(text)} has a name longer than "
                                f"{name_max} bytes ({bounded(part, 40)}), more than the filesystem allows")
    if len(os.fsencode(str(path))) > path_max:
        raise LocationError(f"{what}: file path {bounded(text)} is longer than {path_max} bytes, "
                            "more than the filesystem allows")
    return path


def _limits(path: Path) -> tuple[int, int]:
    """The filesystem's longest name and path (``NAME_MAX``, ``PATH_MAX``) where ``path`` would live."""
    folder = path.absolute()
    while folder != folder.parent:
        try:
            if folder.is_dir():
                break
        except OSError:  # a name too long to even look up
            pass
        folder = folder.parent
    try:
        return os.pathconf(folder, "PC_NAME_MAX"), os.pathconf(folder, "PC_PATH_MAX")
    except (OSError, ValueError, AttributeError):  # no pathconf (Windows) or an odd filesystem
        return 255, 4096


__all__ = ["KNOWN_BACKENDS", "Location", "LocationError", "MAX_LENGTH", "POSTGRES_SCHEMES", "display",
           "is_url", "parse"]
