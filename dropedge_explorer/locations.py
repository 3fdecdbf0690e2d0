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
  refused, not taken for a file of that name;
* a location that cannot hold data once the process ends, or that would open another file
  than the one written, is refused before anything is made: ``:memory:`` (also
  ``sqlite:///:memory:``), a SQLite URI (``file:...``, ``sqlite:///file:...``) and a SQLite
  URL with options (``?mode=ro&uri=true``, ``?immutable=1``: a store must be written, and
  is the file named);
* a server URL whose port is not a number, or whose user name or password holds an
  unencoded ``@``, ``/``, ``?`` or ``#`` (the URL then names another host), is refused with
  the part named and its encoding (``%40``, ``%2F``, ``%3F``, ``%23``).

A password is hidden (:func:`mask`) wherever it sits in a URL: after the user name, or in
the query (``?password=...``, ``?sslpassword=...``, any case), also in a URL that does not
parse.

Example:
    >>> parse("postgresql://me:secret@db.lab/dropedge").display
    'postgresql+psycopg://me:***@db.lab/dropedge'
    >>> parse("sqlite:///results/r.sqlite").file
    PosixPath('results/r.sqlite')
    >>> mask("postgresql://me@db.lab/dropedge?PassWord=secret&sslmode=require")
    'postgresql://me@db.lab/dropedge?PassWord=***&sslmode=require'
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from dropedge_core.echo import bounded
from dropedge_core.files import PathError, checked_path
from sqlalchemy import URL, make_url
from sqlalchemy.exc import ArgumentError, NoSuchModuleError

#: Schemes a user may write for PostgreSQL, and the SQLAlchemy driver each means.
POSTGRES_SCHEMES = {"postgresql": "postgresql+psycopg", "postgres": "postgresql+psycopg",
                    "postgresql+psycopg": "postgresql+psycopg"}
#: Database backends whose name before a ``:`` marks a URL, even with its ``//`` missing.
KNOWN_BACKENDS = ("sqlite", "postgresql", "postgres", "mysql", "mariadb", "oracle", "mssql")
#: Longest location text read at all (a URL or a path); longer ones are refused whole.
MAX_LENGTH = 4096


#: A query key that holds a secret (libpq's ``password``, ``sslpassword``; any case).
_SECRET_KEY = re.compile(r"([?&;][^=&#?;]*pass[^=&#?;]*=)[^&#;]*", re.IGNORECASE)
#: A URL's password after its user name: ``scheme://user:`` up to the last ``@``.
_USER_PASSWORD = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*://[^:/?#@]*:)(.*)@", re.DOTALL)
#: What percent-encodes the characters that end a URL's user name or password.
ENCODINGS = "@ as %40, / as %2F, ? as %3F, # as %23"


class LocationError(ValueError):
    """A store or storage location that cannot be used, in one line."""


@dataclass(frozen=True)
class Location:
    """A parsed location: exactly one of :attr:`file` (a SQLite file; never ``:memory:``,
    which :func:`parse` refuses) and :attr:`url` (a server).

    Args:
        file (Path, optional): the SQLite file, ``~`` expanded; ``None`` for a server.
            (default: :obj:`None`)
        url (sqlalchemy.engine.URL, optional): the server URL with its driver set; ``None``
            for a file. (default: :obj:`None`)
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
        """A URL SQLAlchemy opens: ``sqlite:///file`` or the server URL (password included).
        The file is percent-encoded: a ``?`` or ``#`` in its name stays part of the name
        (written raw, SQLAlchemy would open the file before it, with options)."""
        if self.file is None:
            return self.target
        return URL.create("sqlite", database=str(self.file)).render_as_string(hide_password=False)

    @property
    def display(self) -> str:
        """For messages: the file, or the URL with its passwords hidden (:func:`mask`)."""
        if self.file is not None:
            return str(self.file)
        return mask(self.url.render_as_string(hide_password=True))


def is_url(target: object) -> bool:
    """Whether ``target`` is written as a URL (``scheme://...``) rather than a file path.

    Args:
        target (object): a location as given (text, a path, a :class:`Location`).

    Example:
        >>> is_url("sqlite:///runs.sqlite"), is_url("results/runs.sqlite")
        (True, False)
    """
    return isinstance(target, str) and "://" in target


def mask(text: str) -> str:
    """``text`` with every password of a URL in it shown as ``***``: the user-info password
    (up to the last ``@``, so an unencoded ``@`` in it hides it all) and every query value
    whose key says ``pass`` (any case). Works on text that does not parse as a URL.

    Example:
        >>> mask("postgresql://me:p@ss@host/db?sslpassword=k")
        'postgresql://me:***@host/db?sslpassword=***'
    """
    return _SECRET_KEY.sub(r"\1***", _USER_PASSWORD.sub(r"\1***@", text))


def display(target: object) -> str:
    """Any location as text for a message: a URL's passwords hidden (:func:`mask`).

    Args:
        target (object): a location as given (text, a path, a :class:`Location`).

    Example:
        >>> display("postgresql://ann:secret@db.example.org/runs")
        'postgresql://ann:***@db.example.org/runs'
    """
    if isinstance(target, Location):
        return target.display
    if isinstance(target, URL):
        return mask(target.render_as_string(hide_password=True))
    if is_url(target):  # as written: SQLAlchemy would read an unencoded '@' in a password as the host's
        return mask(str(target))
    return str(target)


def parse(value: str | Path | Location, what: str = "database location",
          allowed: tuple[str, ...] | None = None) -> Location:
    """Read a store or storage location.

    Args:
        value (str or Path or Location): a file path (``~`` allowed), ``sqlite:///file``, or
            ``scheme://user[:password]@host[:port]/database``.
        what (str, optional): what the location is for, named in a refusal (``"--store"``,
            ``"DROPEDGE_RESULTS"``, ``"Optuna storage"``). (default: :obj:`"database location"`)
        allowed (tuple[str, ...], optional): server backends accepted (``("postgresql",)``);
            ``None``: any SQLAlchemy knows. (default: :obj:`None`)

    Raises:
        LocationError: empty, too long, a bad path, a malformed URL, an unknown or
            unsupported scheme, a missing driver (one line).

    Example:
        >>> parse("sqlite:///runs.sqlite").file
        PosixPath('runs.sqlite')
        >>> parse("mysql://ann@db/runs", "--store", allowed=("postgresql",))  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        dropedge_explorer.locations.LocationError: --store: mysql URLs are not supported here ...
    """
    if isinstance(value, Location):
        return value
    if isinstance(value, Path):  # a path object is a name, never a URI: only ":memory:" is refused
        if str(value) == ":memory:":
            _lasting_file(str(value), str(value), what)
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
        return Location(file=_lasting_file(text, text, what))
    return _from_url(text, what, allowed)


def _lasting_file(name: str, text: str, what: str) -> Path:
    """The SQLite file ``name`` (written as ``text``), refused when it would not hold data
    after the process ends (``:memory:``) or is a SQLite URI (SQLite would open another file,
    or none, than the one a path names)."""
    if name.strip().lower() == ":memory:":
        raise LocationError(f"{what}: {bounded(text)} is an in-memory database, gone when the process "
                            "ends; give a file path or a server URL")
    if name.lower().startswith("file:"):
        raise LocationError(f"{what}: {bounded(text)} is a SQLite URI ('file:...'), which is not opened "
                            "as one here; give the file's path (sqlite:///path/to/file.sqlite or a path)")
    return _checked_path(name, what)


def _from_url(text: str, what: str, allowed: tuple[str, ...] | None) -> Location:
    _check_authority(text, what)
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
        if url.query or "?" in text:
            # mode=ro / immutable / uri=true open the file read-only, another file, or none
            raise LocationError(f"{what}: SQLite URL {bounded(text)} has options after '?'; none is "
                                "taken (a store is written, and is the file named): give "
                                "sqlite:///path/to/file.sqlite")
        return Location(file=_lasting_file(url.database, text, what))
    url = url.set(drivername=POSTGRES_SCHEMES.get(scheme, url.drivername))
    _check_backend(url, scheme, what, allowed)
    return Location(url=url)


def _check_authority(text: str, what: str) -> None:
    """The ``user:password@host:port`` part of a server URL, before SQLAlchemy reads it: an
    unencoded ``@``, ``/``, ``?`` or ``#`` in the password moves the host into it (SQLAlchemy
    would then connect to a host named after the password's end), and a port must be a
    number in 1..65535."""
    rest = text.split("://", 1)[1]
    cut = min((i for i in (rest.find(c) for c in "/?#") if i >= 0), default=len(rest))
    head, tail = rest[:cut], rest[cut:]
    shown = bounded(display(text))
    if head.count("@") > 1 or ("@" in head and "@" in tail) or ("@" in tail and ":" in head
                                                                 and "@" not in head):
        raise LocationError(f"{what}: the user name or password in {shown} holds an unencoded "
                            f"'@', '/', '?' or '#' (the host would be read from it); write them "
                            f"percent-encoded: {ENCODINGS}")
    host = head.rsplit("@", 1)[-1]
    if "]" in host:  # [ipv6]:port
        host = host.rsplit("]", 1)[1]
    if ":" in host:
        port = host.rsplit(":", 1)[1]
        if not (port.isascii() and port.isdigit() and 1 <= int(port) <= 65535):
            raise LocationError(f"{what}: the port {bounded(port)} in {shown} is not a number in "
                                "1..65535")


def _check_backend(url: URL, scheme: str, what: str, allowed: tuple[str, ...] | None) -> None:
    """A scheme SQLAlchemy knows, allowed here, whose driver is installed."""
    shown = bounded(display(url))
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
    """``text`` as a path (:func:`dropedge_core.files.checked_path`), its refusal a
    :class:`LocationError`."""
    try:
        return checked_path(text, what)
    except PathError as exc:
        raise LocationError(str(exc)) from None


__all__ = ["Location", "LocationError", "POSTGRES_SCHEMES",
           "display", "is_url", "parse"]
