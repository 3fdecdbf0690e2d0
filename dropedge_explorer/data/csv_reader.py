"""Reading a user's CSV files as data only: bytes -> UTF-8 text -> a table of string cells
(:class:`Table`), node ids and numbers, with one-line errors (:class:`UploadError`) that name
the file, the line, the bad value and what is allowed. The file format is described in
:mod:`dropedge_explorer.data.csv_graph`; nothing is ever unpickled, evaluated or imported."""
from __future__ import annotations

import io
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Union

import numpy as np
import pandas as pd
import pyarrow as pa
from dropedge_core.echo import bounded

from dropedge_explorer.data._csv_guards import (
    ASCII_DIGITS,
    non_ascii_number,
    non_ascii_numbers,
    pickle_protocol,
)

__all__ = [
    "MAX_BYTES", "MAX_NODES", "MAX_CLASSES", "MAX_FEATURES", "Source", "NAN_WORDS", "ID_PATTERN",
    "UploadError", "Table", "show_cell", "has_or_have", "human_size", "read_source", "read_table",
    "header_note", "node_ids", "numbers",
]

MAX_BYTES = 20 * 1024 * 1024  # per file
MAX_NODES = 10_000_000  # node ids must be below this when no features fix N
MAX_CLASSES = 1000
MAX_FEATURES = 100_000  # feature columns (Coauthor-Physics, the widest dataset here, has 8415)

#: What ``parse_graph`` accepts for each file: raw ``bytes``, CSV text as a ``str``,
#: a path (``pathlib.Path`` / ``os.PathLike``), or a file object with ``.read()``
#: (e.g. Streamlit's ``UploadedFile``), read from its start.
Source = Union[bytes, bytearray, memoryview, str, "os.PathLike[str]", IO[bytes], IO[str]]

_STRING = pd.ArrowDtype(pa.string())
NAN_WORDS = ("nan", "+nan", "-nan")
ID_PATTERN = r"[0-9]{1,18}"  # an id that fits int64; longer digit strings are "too large"
_PREVIEW = 80  # characters of a bad value shown in a message (dropedge_core.echo)


class UploadError(ValueError):
    """An uploaded file is unusable; the one-line message names the file, the line,
    the bad value and what is allowed."""


@dataclass
class Table:
    """The data rows of one CSV file, split into string cells.

    Args:
        name (str): the file name used in messages.
        flat (pd.Series): the ``R * C`` stripped string cells, row by row (no header).
        num_columns (int): ``C``.
        lines (np.ndarray): ``(R,)`` 1-based line number of each row in the file.
        header (str, optional): the header row's text. (default: :obj:`None`)
        header_line (int, optional): the header's line number. (default: :obj:`0`: no
            header)
    """

    name: str
    flat: pd.Series
    num_columns: int
    lines: np.ndarray
    header: str | None = None
    header_line: int = 0

    @property
    def num_rows(self) -> int:
        return int(self.lines.size)

    def column(self, c: int) -> pd.Series:
        """Column ``c`` (0-based) as a Series of ``R`` strings."""
        return self.flat.iloc[c::self.num_columns].reset_index(drop=True)

    def cell(self, r: int, c: int) -> str:
        return str(self.flat.iat[r * self.num_columns + c])


# ----------------------------------------------------------------------------- reading


def show_cell(value: object) -> str:
    """``repr`` of a (possibly long) cell, on one line, cut with its length.

    Args:
        value (object): the cell.

    Returns:
        str: one line.
    """
    return bounded(value, _PREVIEW)


def has_or_have(count: int) -> str:
    """``"has"`` for one, else ``"have"`` (messages that count).

    Args:
        count (int): how many.
    """
    return "has" if count == 1 else "have"


def _clean_name(name: object) -> str:
    return re.sub(r"[\x00-\x1f\x7f]", "?", str(name))[:120] or "file"


def human_size(num_bytes: int) -> str:
    """``25.3 MB``, ``20 MB``, ``512 KB``, ``100 bytes`` (1 MB = 1024 * 1024 bytes).

    Args:
        num_bytes (int): a size.

    Returns:
        str: the size in words.

    Example:
        >>> human_size(20 * 1024 * 1024), human_size(100)
        ('20 MB', '100 bytes')
    """
    for unit, size in (("MB", 1 << 20), ("KB", 1 << 10)):
        if num_bytes >= size:
            return f"{num_bytes / size:.1f}".removesuffix(".0") + f" {unit}"
    return f"{num_bytes} bytes"


def _too_big(name: str, size: int | None, max_bytes: int) -> UploadError:
    what = f"is {human_size(size)}" if size is not None else f"is larger than {human_size(max_bytes)}"
    return UploadError(f"{name} {what}; the limit is {human_size(max_bytes)}")


def _decode(raw: bytes, name: str) -> str:
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise UploadError(
            f"{name} is not UTF-8 text (byte 0x{raw[exc.start]:02x} at offset {exc.start}); "
            f"upload a CSV text file") from None
    return text


def read_source(source: Source, default_name: str, max_bytes: int = MAX_BYTES) -> tuple[str, str]:
    """The name and text of one uploaded file, after the size and encoding checks.

    Args:
        source (bytes or str or os.PathLike or file): ``bytes``; a ``str`` of CSV text; a
            ``pathlib.Path`` (or any ``os.PathLike``); or a file object with ``.read()``
            returning bytes or text (read from its start when it can seek; its ``.name``
            names it in messages).
        default_name (str): the name used in messages when the source has none
            (``"edges.csv"``, ...).
        max_bytes (int, optional): size limit of the file. (default: :data:`MAX_BYTES`)

    Returns:
        tuple[str, str]: ``(name, text)``.

    Raises:
        UploadError: missing/unreadable file, over ``max_bytes``, a Python pickle (any
            protocol), not UTF-8, binary.
    """
    name, raw, size = _raw_of(source, default_name, max_bytes)
    text = _text_of(raw, name, size, max_bytes, default_name.split(".")[0])
    nul = text.find("\x00")
    if nul >= 0:
        raise UploadError(f"{name} contains a NUL character (offset {nul}): it is a binary file, "
                          f"not CSV text")
    return name, text


def _raw_of(source: Source, default_name: str, max_bytes: int) -> tuple[str, bytes | str, int | None]:
    """``(name, raw content, size if known)`` of a source, reading at most ``max_bytes + 1``."""
    if isinstance(source, (bytes, bytearray, memoryview)):
        return default_name, bytes(source), len(source)
    if isinstance(source, str):
        if "\n" not in source and "\r" not in source and re.search(
                r"\.(csv|tsv|txt|edges?|el)$", source.strip(), re.IGNORECASE):
            raise UploadError(f"{default_name}: got the string {show_cell(source)}, which looks like a "
                              f"file name; pass a pathlib.Path to read a file, or the CSV text itself")
        return default_name, source, None
    if isinstance(source, os.PathLike):
        return _read_path(Path(source), max_bytes)
    if hasattr(source, "read"):
        return _read_file_object(source, default_name, max_bytes)
    raise UploadError(f"{default_name}: expected bytes, CSV text, a pathlib.Path or a file object "
                      f"(got {type(source).__name__})")


def _read_path(path: Path, max_bytes: int) -> tuple[str, bytes, int]:
    name = _clean_name(path.name)
    try:
        size = path.stat().st_size
        if not path.is_file():
            raise UploadError(f"{_clean_name(path)} is not a file")
        if size > max_bytes:
            raise _too_big(name, size, max_bytes)
        return name, path.read_bytes(), size
    except FileNotFoundError:
        raise UploadError(f"{_clean_name(path)} does not exist") from None
    except OSError as exc:
        raise UploadError(f"cannot read {_clean_name(path)}: {exc.strerror or exc}") from None


def _read_file_object(source, default_name: str, max_bytes: int) -> tuple[str, bytes | str, int | None]:
    name = _clean_name(getattr(source, "name", None) or default_name)
    size = None
    try:
        if getattr(source, "seekable", lambda: False)():
            source.seek(0)
        raw = source.read(max_bytes + 1)
        if len(raw) > max_bytes and getattr(source, "seekable", lambda: False)():
            size = source.seek(0, io.SEEK_END)
    except (OSError, ValueError) as exc:
        raise UploadError(f"cannot read {name}: {exc}") from None
    if not isinstance(raw, (bytes, bytearray, str)):
        raise UploadError(f"{name}: .read() gave {type(raw).__name__}, not bytes or text")
    return name, raw, size


def _text_of(raw: bytes | str, name: str, size: int | None, max_bytes: int, role: str) -> str:
    """The text of ``raw`` after the size, pickle and encoding checks (a leading BOM dropped)."""
    if isinstance(raw, str):
        try:
            encoded = len(raw.encode("utf-8"))
        except UnicodeEncodeError as exc:  # lone surrogates: not text any file could hold
            raise UploadError(f"{name} is not valid Unicode text (character {exc.start} is "
                              f"{exc.object[exc.start]!r})") from None
        if encoded > max_bytes:
            raise _too_big(name, encoded, max_bytes)
    elif len(raw) > max_bytes:
        raise _too_big(name, size if size and size > max_bytes else None, max_bytes)
    protocol = pickle_protocol(raw)  # protocol 0 is ASCII text: refused before it reads as class names
    if protocol is not None:
        raise UploadError(f"{name} looks like a Python pickle (protocol {protocol}), not CSV text; {role} "
                          f"must be a CSV/text file (a pickle is never unpickled here)")
    return raw.removeprefix("\ufeff") if isinstance(raw, str) else _decode(bytes(raw), name)


def _is_number(cells: pd.Series) -> np.ndarray:
    """Which cells read as a number (``nan``/``inf`` included: they are not header words)."""
    # a failed parse is NaN, not NA, in an Arrow float column: test with isnan
    numeric = ~np.isnan(pd.to_numeric(cells, errors="coerce").to_numpy("float64", na_value=np.nan))
    return numeric | cells.str.lower().isin(NAN_WORDS).to_numpy(bool)


def read_table(text: str, name: str, num_fields: int | tuple[int, ...] | None = None,
               header: bool | None = None, keep_blank: bool = False, blanks: bool = True) -> Table:
    """Split CSV text into a :class:`Table` of string cells, checking the field count.

    Args:
        text (str): the file's text.
        name (str): the file name for messages.
        num_fields (int or tuple[int, ...], optional): the allowed number(s) of fields per
            row; ``None``: whatever the first row has. Every row (a header too) must have
            as many as the first. (default: :obj:`None`)
        header (bool, optional): ``True``/``False`` force the first row to be / not be a
            header; ``None`` (the default): it is a header when none of its cells is a number, in ASCII digits
            or not (``０,１`` is a row, refused by the cell parsers as on any line).
        keep_blank (bool, optional): in a one-column file, a blank line after the first row is an empty
            cell (how some writers put a missing value), not a line to skip; the newline
            that ends the file makes no row. (default: :obj:`False`)
        blanks (bool, optional): split a file with no comma in any row on spaces and tabs; ``False``:
            only on commas (a one-column file of class names such as ``New York``). A file
            with a comma in any row is split on commas only, whatever its first row holds.
            (default: :obj:`True`)

    Returns:
        Table: the rows.

    Raises:
        UploadError: ``"<name> line 7 has 3 fields; expected 2"``.
    """
    rows, line_no = _rows(text, keep_blank, blanks)
    if rows.empty:
        return Table(name, pd.Series([], dtype=_STRING), 0, line_no)
    first = str(rows.iat[0])
    if first.count(",") >= MAX_FEATURES:  # before splitting: a wide row costs ~100 bytes a cell
        raise UploadError(f"{name} has {first.count(',') + 1} columns on line {line_no[0]}; at most "
                          f"{MAX_FEATURES} are allowed")
    if not blanks or _has_comma(rows) or not re.search(r"[ \t]", first):
        parts = rows.str.split(",")
    else:  # no comma in any row but blanks in the first: a space/tab separated file
        parts = rows.str.split(r"[ \t]+", regex=True)
    width = _check_field_counts(parts.list.len().to_numpy().astype(np.int64), num_fields, name, line_no)
    # row-major cells: the C cells of row r are flat[r * C : (r + 1) * C]
    flat = parts.explode(ignore_index=True).str.strip()
    if flat.str.contains('"', regex=False).any():
        flat = flat.str.replace(r'^"(.*)"$', r"\1", regex=True).str.strip()
    if header is None:
        first_cells = flat.iloc[:width]
        header = not (_is_number(first_cells) | non_ascii_numbers(first_cells)).any()
    if header:
        return Table(name, flat.iloc[width:].reset_index(drop=True), width, line_no[1:],
                     header=first, header_line=int(line_no[0]))
    return Table(name, flat, width, line_no)


def _rows(text: str, keep_blank: bool, blanks: bool = True) -> tuple[pd.Series, np.ndarray]:
    """The stripped non-blank, non-comment lines of ``text`` and their 1-based line numbers
    (with ``keep_blank``, a one-column file's blank lines after its first row too)."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    lines = pd.Series(pa.array(text.split("\n"), type=pa.string()), dtype=_STRING)
    stripped = lines.str.strip()
    keep = ((stripped != "") & ~stripped.str.startswith("#")).to_numpy(bool)
    if keep_blank and keep.any():
        start = int(np.argmax(keep))
        separators = r"[,\t ]" if blanks and not _has_comma(stripped[keep]) else ","
        if not re.search(separators, str(stripped.iat[start])):  # one column: blank lines are cells
            end = len(keep) - 1 if text.endswith("\n") else len(keep)
            blank = (stripped == "").to_numpy(bool)
            keep[start:end] |= blank[start:end]
    return stripped[keep].reset_index(drop=True), np.flatnonzero(keep) + 1


def _has_comma(rows: pd.Series) -> bool:
    """Whether any of ``rows`` holds a comma: then the file is split on commas only (a first
    row without one is one field, not words to split on spaces)."""
    return bool(rows.str.contains(",", regex=False).any())


def _check_field_counts(counts: np.ndarray, num_fields, name: str, line_no: np.ndarray) -> int:
    """The table's width (the first row's count) once every row has an allowed count."""
    if isinstance(num_fields, int):
        allowed, suffix = (num_fields,), ""
    elif num_fields is None or counts[0] in num_fields:
        allowed, suffix = (int(counts[0]),), f" (as on line {line_no[0]})"
    else:
        allowed, suffix = tuple(num_fields), ""
    bad = ~np.isin(counts, allowed)
    if bad.any():
        i = int(np.argmax(bad))
        want = " or ".join(str(k) for k in allowed) + (suffix if i > 0 else "")
        count = int(counts[i])
        raise UploadError(f"{name} line {line_no[i]} has {count} field{'s' * (count != 1)}; "
                          f"expected {want}")
    return int(counts[0])


def header_note(table: Table) -> list[str]:
    """The note that ``table``'s first line was read as a header (none without one).

    Args:
        table (Table): the file's rows.

    Returns:
        list[str]: zero or one line.
    """
    if table.header is None:
        return []
    return [f"{table.name}: line {table.header_line} ({show_cell(table.header)}) read as a header"]


# ----------------------------------------------------------------------------- cells


def _first_bad(bad: np.ndarray) -> tuple[int, int]:
    """Row and column of the first True of a ``(R, C)`` array, in file order."""
    flat = int(np.argmax(bad.reshape(-1)))
    return flat // bad.shape[1], flat % bad.shape[1]


def node_ids(table: Table, columns: list[int], limit: int, why: str) -> np.ndarray:
    """The ``(R, len(columns))`` int64 node ids in ``columns`` of ``table``.

    Args:
        table (Table): the file's rows.
        columns (list[int]): the 0-based columns that hold node ids.
        limit (int): ids must be below it.
        why (str): the reason for the limit, ending a message ("ids must be 0..49").

    Raises:
        UploadError: the first cell, in file order, that is not an integer ``>= 0``
            or is ``>= limit``.
    """
    cells = [table.column(c) for c in columns]
    bad = np.stack([~col.str.fullmatch(ID_PATTERN).to_numpy(bool) for col in cells], axis=1)
    if bad.any():
        r, c = _first_bad(bad)
        value = str(cells[c].iat[r])
        where = f"{table.name} line {table.lines[r]}"
        if re.fullmatch(r"-[0-9]+", value):
            raise UploadError(f"{where}: node id {value} is negative; ids are integers >= 0")
        if re.fullmatch(r"[0-9]+", value):
            raise UploadError(f"{where}: node id {show_cell(value)} is too large; {why}")
        if non_ascii_number(value):
            raise UploadError(f"{where}: {show_cell(value)} is written with non-ASCII digits; {ASCII_DIGITS}")
        raise UploadError(f"{where}: {show_cell(value)} is not a non-negative integer node id")
    ids = np.stack([col.astype("int64").to_numpy() for col in cells], axis=1)
    over = ids >= limit
    if over.any():
        r, c = _first_bad(over)
        raise UploadError(f"{table.name} line {table.lines[r]}: node id {ids[r, c]} is out of range; "
                          f"{why}")
    return ids


def numbers(table: Table) -> np.ndarray:
    """The ``(R, C)`` float64 values of ``table``; every cell a finite number.

    Args:
        table (Table): the file's rows.

    Raises:
        UploadError: ``"<name> line 5, column 2: 'abc' is not a number"`` (or NaN/inf).
    """
    try:  # Arrow's strict cast is the fast path; it fails on any non-number
        values = table.flat.astype("float64[pyarrow]").to_numpy("float64", na_value=np.nan)
    except (pa.ArrowInvalid, ValueError, TypeError):
        values = pd.to_numeric(table.flat, errors="coerce").to_numpy("float64", na_value=np.nan)
    bad = ~np.isfinite(values)
    if bad.any():
        i = int(np.argmax(bad))
        r, c = divmod(i, table.num_columns)
        value = str(table.flat.iat[i])
        what = ("is not a number" if np.isnan(values[i]) and value.lower() not in NAN_WORDS
                else "is not a finite number (NaN and inf are not allowed)")
        if non_ascii_number(value):
            what = f"is written with non-ASCII digits; {ASCII_DIGITS}"
        raise UploadError(f"{table.name} line {table.lines[r]}, column {c + 1}: {show_cell(value)} {what}")
    return values.reshape(table.num_rows, table.num_columns)


# ----------------------------------------------------------------------------- the files
