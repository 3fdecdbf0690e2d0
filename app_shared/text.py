"""Text shown through Streamlit's Markdown, as written."""
from __future__ import annotations

import re


def plain(text: str) -> str:
    """``text`` (file names, messages quoting file content) escaped so that Streamlit's
    Markdown shows it as written: no emphasis, links, LaTeX or ``:color[...]``."""
    text = re.sub(r"([\\`*_\[\]$<>~|#])", r"\\\1", str(text))
    return re.sub(r":(?=[A-Za-z])", r"\\:", text)


__all__ = ["plain"]
