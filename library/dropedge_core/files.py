"""Where the library reads and writes files: the data directories named by the environment,
paths checked against the filesystem's limits before any call, and files written whole.

``$DROPEDGE_DATA`` (a directory in PyG's raw layout, possibly read-only) and
``$DROPEDGE_CACHE`` (the writable cache, default ``~/.cache/dropedge_explorer``) are the
two directories :mod:`dropedge_core.datasets` reads; :func:`replaced` is how every file of
the cache (and of any application on top) is written: a reader sees the old file or the new
one, never half of one.
"""
from __future__ import annotations

import os
import uuid
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from dropedge_core.echo import bounded

#: the environment variables that name directories the library reads
DIRECTORIES = ("DROPEDGE_DATA", "DROPEDGE_CACHE")


class PathError(ValueError):
    """A path the filesystem cannot hold (NUL byte, a name or a whole path too long), or a
    URL where a directory is needed."""


def _filesystem_limits(path: Path) -> tuple[int, int]:
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


def checked_path(text: str, what: str) -> Path:
    """``text`` as a path, ``~`` expanded; a NUL byte, a component or a whole path longer
    than the filesystem allows refused here (the OS would raise on the first file call).

    Args:
        text (str): the path as given.
        what (str): where it came from, for the message (``"--store"``, ``"DROPEDGE_DATA"``).

    Raises:
        PathError: one line naming ``what``, the path (cut) and what is allowed.

    Example:
        >>> checked_path("~/data", "DROPEDGE_DATA") == Path.home() / "data"
        True
        >>> checked_path("x" * 300, "DROPEDGE_DATA")
        Traceback (most recent call last):
        ...
        dropedge_core.files.PathError: DROPEDGE_DATA: file path 'xxx...
    """
    if "\x00" in text:
        raise PathError(f"{what}: file path {bounded(text)} contains a NUL character")
    path = Path(text).expanduser()
    name_max, path_max = _filesystem_limits(path)
    for part in path.parts:
        if len(os.fsencode(part)) > name_max:
            raise PathError(f"{what}: file path {bounded(text)} has a name longer than "
                            f"{name_max} bytes ({bounded(part, 40)}), more than the filesystem allows")
    if len(os.fsencode(str(path))) > path_max:
        raise PathError(f"{what}: file path {bounded(text)} is longer than {path_max} bytes, "
                        "more than the filesystem allows")
    return path


def directory(name: str, environ: Mapping[str, str] | None = None) -> Path | None:
    """``$name`` (one of :data:`DIRECTORIES`) as a path, ``~`` expanded; ``None`` when unset
    or empty.

    Args:
        name (str): the variable.
        environ (Mapping, optional): the environment (default: :obj:`os.environ`).

    Raises:
        PathError: a URL, a NUL byte, a name or a whole path longer than the filesystem
            allows (one line naming the variable and what is allowed).

    Example:
        >>> directory("DROPEDGE_DATA", {"DROPEDGE_DATA": "  "}) is None
        True
        >>> directory("DROPEDGE_DATA", {"DROPEDGE_DATA": "https://example.org/data"})
        Traceback (most recent call last):
        ...
        dropedge_core.files.PathError: DROPEDGE_DATA must be a directory path ('~' allowed), not a URL \
(got 'https://example.org/data')
    """
    text = str((os.environ if environ is None else environ).get(name, "")).strip()
    if not text:
        return None
    allowed = f"{name} must be a directory path ('~' allowed)"
    if "://" in text:
        raise PathError(f"{allowed}, not a URL (got {bounded(text)})")
    try:
        return checked_path(text, name)
    except PathError as exc:
        raise PathError(f"{exc}; {allowed}") from None


def part_path(target: Path) -> Path:
    """A temporary name beside ``target`` for writing it whole, unique to this process and
    this call (``.name.<pid>.<random>.part``): a fixed name (``.name.part``) is shared by
    every process that writes ``target`` at once, and one's rename takes the other's file.

    Args:
        target (Path): the file to be written.

    Example:
        >>> part_path(Path("cache/raw/ind.cora.x")).name.startswith(".ind.cora.x.")
        True
    """
    return target.with_name(f".{target.name}.{os.getpid()}.{uuid.uuid4().hex[:12]}.part")


@contextmanager
def replaced(target: str | Path) -> Iterator[Path]:
    """Write ``target`` whole: yields :func:`part_path` to write to, renamed onto ``target``
    (atomic: a reader sees the old file or the new one) when the block ends without an
    error; removed when it raises.

    Example::

        with replaced(cache / "ind.cora.x") as part:
            shutil.copyfile(source, part)

    Args:
        target (str or Path): the file written.
    """
    part = part_path(Path(target))
    try:
        yield part
        os.replace(part, target)
    finally:
        part.unlink(missing_ok=True)


__all__ = ["DIRECTORIES", "PathError", "checked_path", "directory", "part_path", "replaced"]
