"""What a user's CSV file must not be, although it may decode as text: a Python pickle, or
numbers written with non-ASCII digits. Used by :mod:`dropedge_explorer.data.csv_reader`.

* A pickle of any protocol is refused by its opcodes, which :mod:`pickletools` reads as
  data: it names no module, imports nothing and builds no object (nothing is unpickled).
  Protocol 2 and above begin with the ``PROTO`` opcode (``b"\\x80"`` and the protocol); a
  protocol-0 pickle is ASCII lines (``(lp0``, ``Vcat``, ``p1``, ..., ``.``) that would
  otherwise read as a column of class names. Such a file must end with ``STOP`` (``.``)
  and read as opcodes that a pickler writes (:func:`pickle_protocol`: whole up to
  :data:`WHOLE_CHECK` bytes, else its start); a label or feature file is not that (a
  newline is no opcode), so a real CSV file costs at most one failed opcode read.
* ``str.isdigit()`` and Python's ``int``/``float`` accept any Unicode digit (``"１"``,
  ``"٣"``), pandas and Arrow only ASCII ones: a number written in full-width or
  Arabic-Indic digits would otherwise be a header word on line 1 and a bad cell (or a
  class name) below it. :func:`non_ascii_numbers` finds such cells: the first row is no
  header when it has one, and every line refuses them with :data:`ASCII_DIGITS`.
"""
from __future__ import annotations

import pickletools

import numpy as np
import pandas as pd
import pyarrow as pa

#: Bytes of a file read as pickle opcodes at most (a smaller file is checked whole).
WHOLE_CHECK = 256 * 1024
#: Objects a pickle leaves outside any mark at most while it is read (a few per level of
#: nesting; Python's pickler stops near 1000 levels).
MAX_UNMARKED = 1000
_STRING = pd.ArrowDtype(pa.string())
#: A number in decimal digits of any script, as Python's ``float`` reads one.
_NUMBER = r"[+-]?(?:\p{Nd}+\.?\p{Nd}*|\.\p{Nd}+)(?:[eE][+-]?\p{Nd}+)?"
#: How a message says what is allowed instead of a non-ASCII digit.
ASCII_DIGITS = "only ASCII digits 0-9 are allowed in numbers"


class _Discard:
    """A text sink for :func:`pickletools.dis`, which prints every opcode it checks."""

    def write(self, text: str) -> int:
        return len(text)


def pickle_protocol(raw: bytes | str) -> int | None:
    """The protocol of the pickle that ``raw`` is, or ``None`` when it is not one.

    A file of at most :data:`WHOLE_CHECK` bytes is a pickle when the whole of it, up to
    trailing blanks, is one complete pickle (the disassembler's stack and memo checks
    pass: one object left at ``STOP``). A longer one is judged by its first
    :data:`WHOLE_CHECK` bytes, which must be opcodes from one that takes nothing off the
    stack, and its end, ``STOP``: reading every opcode of a 20 MB file in Python would take
    seconds, and a CSV file's lines are not opcodes for that long.

    Args:
        raw (bytes or str): a file's content; text (a ``str``) is checked as its ASCII
            bytes.

    Returns:
        int, optional: the protocol, or ``None``.

    Examples:
        >>> import pickle
        >>> [pickle_protocol(pickle.dumps(["cat", "dog"], protocol=p)) for p in (0, 1, 5)]
        [0, 1, 5]
        >>> pickle_protocol(b"label\\ncat\\ndog\\n.\\n") is None
        True
    """
    if isinstance(raw, str):
        if not raw.isascii():  # protocol 0 writes ASCII only (raw-unicode-escape)
            return None
        raw = raw.encode("ascii")
    if raw[:1] == b"\x80" and raw[1:2] in (b"\x02", b"\x03", b"\x04", b"\x05"):
        return raw[1]  # PROTO n: no UTF-8 text starts with a continuation byte
    if not raw.rstrip().endswith(b"."):  # every pickle ends with STOP
        return None
    try:
        protocol, end = _read_opcodes(raw)
        if end is not None:  # read to its STOP
            if raw[end:].strip():  # more after the STOP: not a pickle file
                return None
            pickletools.dis(raw[:end], out=_Discard())  # one object left at STOP, memo used right
    except Exception:  # reading the opcodes failed (a ValueError, a bad escape, ...): not a pickle
        return None
    return protocol


def _read_opcodes(raw: bytes) -> tuple[int, int | None]:
    """The highest protocol among ``raw``'s opcodes and the offset after its ``STOP``, or
    ``None`` for the offset when more than :data:`WHOLE_CHECK` bytes were read without one.

    The stack is followed as counts of objects between marks: an opcode that takes from an
    empty stack, or more than :data:`MAX_UNMARKED` objects outside any mark (a pickler
    keeps only the few an object under construction needs there; lines of a CSV file that
    happen to be opcodes, like ``cat``/``dog`` pairs read as ``GLOBAL``, only pile up).

    Raises:
        ValueError: not opcodes, or opcodes no pickler writes.
    """
    protocol, frames = 0, [0]  # objects above each mark; frames[0]: below every mark
    for opcode, _, pos in pickletools.genops(raw):
        before = opcode.stack_before
        take = len(before)
        if pickletools.markobject in before:  # takes everything down to the last mark
            if len(frames) == 1:
                raise ValueError(f"{opcode.name} without a MARK")
            frames.pop()
            take = before.index(pickletools.markobject)
        if frames[-1] < take:
            raise ValueError(f"{opcode.name} takes from an empty stack")
        frames[-1] -= take
        if pickletools.markobject in opcode.stack_after:
            frames.append(0)
        else:
            frames[-1] += len(opcode.stack_after)
        if frames[0] > MAX_UNMARKED:
            raise ValueError("objects pile up outside a MARK")
        protocol = max(protocol, opcode.proto)
        if opcode.name == "STOP":
            return protocol, pos + 1
        if pos > WHOLE_CHECK:
            return protocol, None
    raise ValueError("no STOP")


def non_ascii_numbers(cells: pd.Series) -> np.ndarray:
    """Which string cells are a number written with non-ASCII digits: not ASCII, and either
    what Python's ``float`` reads (decimal digits of any script, Unicode category Nd: ``"１"``,
    ``"-٣.٥"``, ``"१e5"``) or digits to ``str.isdigit`` once one sign and one point are
    dropped (``"²"``, ``"①"``).

    Args:
        cells (pd.Series): string cells.

    Returns:
        np.ndarray: one bool per cell.

    Examples:
        >>> cells = pd.Series(["\\uff10", "-\\u0663.\\u0665", "12", "x\\uff11", "caf\\u00e9"])
        >>> non_ascii_numbers(cells).tolist()
        [True, True, False, False, False]
    """
    cells = cells.astype(_STRING)  # Arrow's regex engine (RE2) knows \p{Nd}; Python's re does not
    wide = ~cells.str.isascii().to_numpy(bool)
    out = np.zeros(len(cells), dtype=bool)
    if wide.any():  # the non-ASCII cells only; Arrow's isdigit is Python's (Unicode digits)
        some = cells[wide].str.strip()
        digits = some.str.replace(r"^[+-]", "", regex=True).str.replace(".", "", n=1, regex=False)
        out[wide] = (some.str.fullmatch(_NUMBER) | digits.str.isdigit()).to_numpy(bool)
    return out


def non_ascii_number(cell: str) -> bool:
    """:func:`non_ascii_numbers` of one cell.

    Args:
        cell (str): one cell.

    Returns:
        bool: whether it is such a number.
    """
    return bool(non_ascii_numbers(pd.Series([str(cell)]))[0])
