"""Text shown through Streamlit's Markdown: as written (:func:`plain`), and without the
server's file paths (:func:`private`, :func:`store_label`).

The app may be opened by a whole class (README, "The app as a classroom server"): a
visitor sees which kind of store or folder holds the data and its last name, never where
it lies on the server."""
from __future__ import annotations

import re
from pathlib import Path

#: A POSIX absolute path's (or ``~/``'s) folders: ``/srv/app/results/`` in
#: ``/srv/app/results/runs.sqlite``. Not a URL's ``//host/`` (after ``:`` or ``/``), nor a
#: part of a word (``a/b``).
_FOLDERS = re.compile(r"(?<![\w:/.~-])(?:~|)/(?:[^\s/'\"`()\[\]<>]+/)+")


def plain(text: str) -> str:
    """``text`` (file names, messages quoting file content) escaped so that Streamlit's
    Markdown shows it as written: no emphasis, links, LaTeX or ``:color[...]``."""
    text = re.sub(r"([\\`*_\[\]$<>~|#])", r"\\\1", str(text))
    return re.sub(r":(?=[A-Za-z])", r"\\:", text)


def private(text: str) -> str:
    """``text`` with every absolute path's folders dropped: a message naming
    ``/srv/data/results.sqlite`` names ``results.sqlite``.

    Example:
        >>> private("cannot open /srv/app/results/runs.sqlite: locked")
        'cannot open runs.sqlite: locked'
        >>> private("postgresql://me:***@db:5432/runs")
        'postgresql://me:***@db:5432/runs'
    """
    return _FOLDERS.sub("", str(text))


def store_label(location) -> str:
    """A store as a visitor may see it: its kind and its last name (``SQLite file
    runs.sqlite``, ``PostgreSQL database runs``), no folder, host or password.

    Example:
        >>> store_label("/srv/app/results/runs.sqlite"), store_label("postgresql://me:pw@db:5432/runs")
        ('SQLite file runs.sqlite', 'PostgreSQL database runs')
    """
    text = str(location)
    if "://" in text and not text.startswith("sqlite"):
        kind = text.split("://", 1)[0].split("+", 1)[0]
        name = text.rsplit("/", 1)[-1].split("?", 1)[0]
        return f"{'PostgreSQL' if kind.startswith('postgres') else kind} database {name}"
    return f"SQLite file {Path(text.split('///', 1)[-1]).name}"


__all__ = ["plain", "private", "store_label"]
