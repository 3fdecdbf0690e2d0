"""Reading the Planetoid raw files (``ind.cora.x`` ...) without letting them run code.

The files are Python 2 pickles, and a pickle is a program: ``pickle.load`` of a crafted
``ind.cora.x`` runs whatever it names (``os.system``, ``eval``, ...). :func:`load` unpickles
with a restricted ``find_class`` that admits only the types these files hold — numpy
arrays and dtypes, scipy's CSR matrix, ``collections.defaultdict``, builtin lists (and
``_codecs.encode``, how Python 3 writes bytes at protocol 2) —
so a crafted file fails with :class:`UnsafePickleError` (one line naming the file and the
refused global) before anything it names is even imported. Every raw Planetoid file the
package reads goes through here (:mod:`dropedge_core.data.datasets` does not let PyG unpickle
them, nor load a processed ``data.pt``).

What the admitted callables can do with attacker-chosen arguments: build an array
(``_reconstruct``, ``ndarray.__setstate__`` check shapes against the bytes given), a
dtype, text encoded by a registered codec (the standard ones transform data only), a
CSR matrix (its ``__dict__`` set from the file: plain attributes, checked by
:mod:`dropedge_core.data.datasets` before use) or a ``defaultdict`` whose factory is itself
one of the admitted callables. None of them touches files, processes or imports.
"""
from __future__ import annotations

import io
import pickle
from pathlib import Path

#: ``(module, name)`` pairs a Planetoid raw file may name; both numpy 1 and 2 spellings,
#: and scipy's old (``scipy.sparse.csr``) and new (``scipy.sparse._csr``) module paths.
ALLOWED: frozenset[tuple[str, str]] = frozenset({
    ("numpy", "ndarray"), ("numpy", "dtype"),
    ("numpy.core.multiarray", "_reconstruct"), ("numpy._core.multiarray", "_reconstruct"),
    ("numpy.core.multiarray", "scalar"), ("numpy._core.multiarray", "scalar"),
    ("scipy.sparse.csr", "csr_matrix"), ("scipy.sparse._csr", "csr_matrix"),
    ("scipy.sparse", "csr_matrix"),
    ("collections", "defaultdict"),
    ("__builtin__", "list"), ("builtins", "list"), ("__builtin__", "dict"), ("builtins", "dict"),
    ("__builtin__", "int"), ("builtins", "int"),
    ("_codecs", "encode"),  # how Python 3 writes bytes at protocol 2 (a file re-saved in Python 3)
})
MAX_BYTES = 512 * 1024 * 1024  # PubMed's largest raw file is ~40 MB


class UnsafePickleError(pickle.UnpicklingError):
    """A raw file names a global outside :data:`ALLOWED` (it would run code), or is not a
    pickle at all; the message is one line."""


class _Restricted(pickle.Unpickler):
    def find_class(self, module: str, name: str):
        if (module, name) not in ALLOWED:
            raise UnsafePickleError(f"refers to {module}.{name}, which a Planetoid raw file never holds "
                                    f"(it would run code); not loaded")
        if module in ("__builtin__", "builtins"):
            import builtins

            return getattr(builtins, name)
        if module == "_codecs":
            import codecs

            return codecs.encode
        if module == "collections":
            import collections

            return collections.defaultdict
        if module.startswith("scipy"):
            import scipy.sparse

            return scipy.sparse.csr_matrix
        import numpy as np

        if name == "ndarray":
            return np.ndarray
        if name == "dtype":
            return np.dtype
        try:
            from numpy._core import multiarray  # numpy >= 2
        except ImportError:
            from numpy.core import multiarray
        return getattr(multiarray, name)

    def persistent_load(self, pid):
        raise UnsafePickleError("uses persistent ids, which a Planetoid raw file never holds; not loaded")


def loads(data: bytes) -> object:
    """Unpickle ``data`` with only :data:`ALLOWED` globals (``latin1`` for numpy's
    Python 2 byte strings)."""
    return _Restricted(io.BytesIO(data), encoding="latin1").load()


def load(path: str | Path) -> object:
    """Unpickle the file at ``path`` with :func:`loads`.

    Raises:
        UnsafePickleError: a refused global, persistent ids, or not a pickle (one line,
            naming the file).
        OSError: the file cannot be read.
    """
    path = Path(path)
    if path.stat().st_size > MAX_BYTES:
        raise UnsafePickleError(f"{path.name} is larger than {MAX_BYTES >> 20} MB; not a Planetoid raw file")
    data = path.read_bytes()
    try:
        return loads(data)
    except UnsafePickleError as exc:
        raise UnsafePickleError(f"{path.name} {exc}") from None
    except Exception as exc:  # truncated or garbage: pickle's and numpy's errors vary
        raise UnsafePickleError(f"{path.name} is not a readable pickle ({type(exc).__name__}: "
                                f"{' '.join(str(exc).split())[:100]})") from None


__all__ = ["ALLOWED", "UnsafePickleError", "load", "loads"]
