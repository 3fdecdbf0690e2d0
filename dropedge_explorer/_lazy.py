"""One way to import a heavy library on first use.

``torch_geometric``, ``scipy`` and ``pandas`` each take a second or more to import, and
most runs never touch them (PyG only reads a dataset's raw files once, scipy only labels
components, pandas only builds a table), so the modules that need them ask here instead
of importing at the top or inside each function.
"""
from __future__ import annotations

import importlib
from functools import cache
from types import ModuleType


@cache
def lazy_import(name: str) -> ModuleType:
    r"""The module ``name``, imported on the first call and cached after.

    Args:
        name (str): a module's absolute dotted name, e.g. ``"scipy.sparse.csgraph"``.

    Returns:
        ModuleType: the module itself (the same object on every call).

    Raises:
        ModuleNotFoundError: when ``name`` is not installed.

    Example:
        >>> from dropedge_explorer._lazy import lazy_import
        >>> lazy_import("json").dumps([1, 2])
        '[1, 2]'
    """
    return importlib.import_module(name)
