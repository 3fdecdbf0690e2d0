"""How a refused value is shown in a one-line message: cut, on one line, with its length.

A message names the value it refuses, but the value can be anything a user or a link
typed: a 10,000-character URL parameter echoed whole is a 10,000-character alert, and a
newline in it breaks the one-line promise. :func:`bounded` shows at most
:data:`LIMIT` characters of the value's ``repr`` (control characters escaped by it) and,
when it cut, how long the value was.
"""
from __future__ import annotations

import re

LIMIT = 80


def bounded(value: object, limit: int = LIMIT, quote: bool = True) -> str:
    """``repr(str(value))``, cut to about ``limit`` characters with the length added.

    Args:
        value (object): the refused value.
        limit (int, optional): characters of it shown. (default: :obj:`80`)
        quote (bool, optional): :obj:`False` shows the text as it is (``layers=abc``),
            control characters as ``?``, instead of its ``repr``. (default: :obj:`True`)

    Examples:
        >>> bounded("abc")
        "'abc'"
        >>> bounded("x" * 10_000)[-30:]
        "xxxxxxx'... (10000 characters)"
    """
    if isinstance(value, int) and value.bit_length() > 3 * limit:  # str() of > 4300 digits raises
        return f"an integer of about {int(value.bit_length() * 0.30103) + 1} digits"
    text = str(value)
    shown = text[:limit]
    shown = repr(shown) if quote else re.sub(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]", "?", shown)
    return shown if len(text) <= limit else f"{shown}... ({len(text)} characters)"


__all__ = ["LIMIT", "bounded"]
