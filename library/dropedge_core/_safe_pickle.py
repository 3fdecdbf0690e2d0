"""Reading the Planetoid raw files (``ind.cora.x`` ...) without letting them run code.

The files are Python 2 pickles, and a pickle is a program: ``pickle.load`` of a crafted
``ind.cora.x`` runs whatever it names (``os.system``, ``eval``, ...). :func:`load` unpickles
with a restricted ``find_class`` that admits only the types these files hold — numpy
arrays and dtypes, scipy's CSR matrix, ``collections.defaultdict``, builtin lists (and
``_codecs.encode``, how Python 3 writes bytes at protocol 2) —
so a crafted file fails with :class:`UnsafePickleError` (one line naming the file and the
refused global) before anything it names is even imported. Every raw Planetoid file the
package reads goes through here (:mod:`dropedge_core.datasets` does not let PyG unpickle
them, nor load a processed ``data.pt``).

Admitted is not trusted: numpy's and scipy's own constructors are native code that
believes its arguments (``ndarray.__setstate__`` of an object array given a list shorter
than its shape reads past the list: a segmentation fault), so each numpy/scipy name
resolves to a checking stand-in, never to the real callable:

* ``_reconstruct`` only as numpy pickles it (an empty 1-d array, filled by its state);
  the state (:class:`_Array`) must be a numeric dtype with exactly ``prod(shape) *
  itemsize`` bytes of data (no object, string or structured arrays);
* ``dtype`` only a plain numeric type code (``i4``, ``f8``, ``b1`` ...) with its ordinary
  state (:class:`_DType`); ``scalar`` only of such a dtype, from its exact bytes;
* ``csr_matrix`` becomes a :class:`CSRState`, an inert bag of the attributes the file
  holds: no scipy object exists until
  :func:`dropedge_core._raw_arrays.csr_from_state` has checked them.

And a pickle's memo lets one list appear many times at the cost of two bytes each, so
a 2 KB file can be a list of a billion items for whoever flattens it (a "billion
laughs"); :func:`load` counts the items the object would expand to, shared references
counted every time, and refuses the file above :func:`max_items` (from
``DROPEDGE_MAX_MEMORY_GB``) or when a list contains itself. None of the admitted
callables touches files, processes or imports.
"""
from __future__ import annotations

import builtins
import codecs
import collections
import io
import math
import pickle
import re
from pathlib import Path

import numpy as np
from numpy._core import multiarray

from dropedge_core import limits

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
    ("__builtin__", "bytes"), ("builtins", "bytes"),  # how Python 3 writes b"" at protocol 2
    ("_codecs", "encode"),  # how Python 3 writes bytes at protocol 2 (a file re-saved in Python 3)
})
MAX_BYTES = 512 * 1024 * 1024  # PubMed's largest raw file is ~40 MB
#: bytes one expanded item may cost whoever flattens it (a Python list slot, the int
#: tensor it becomes, the sort and coalesce copies of an edge list)
ITEM_BYTES = 64
_NUMERIC = re.compile(r"[<>|=]?(b1|[iu][1248]|f[248])")  # every dtype a Planetoid file holds


class UnsafePickleError(pickle.UnpicklingError):
    """A raw file names a global outside :data:`ALLOWED` (it would run code), holds
    something no Planetoid file holds, expands past the memory limit, or is not a
    pickle at all; the message is one line."""


class _DType:
    """``numpy.dtype(code, align, copy)`` for a plain numeric type code only; its pickled
    state is checked to be the ordinary one (a crafted state could give a dtype a size its
    arrays do not have). The real dtype is :attr:`real`."""

    def __init__(self, code=None, align=False, copy=True):
        if not isinstance(code, str) or not _NUMERIC.fullmatch(code):
            raise UnsafePickleError(f"names the dtype {str(code)[:20]!r}; a Planetoid raw file holds "
                                    f"numeric arrays only")
        self.real = np.dtype(code)

    def __setstate__(self, state):
        order = state[1] if isinstance(state, tuple) and len(state) == 8 else None
        if order not in ("<", ">", "|", "=") or state[0] not in (3, 4) or state[2:] != (None, None, None,
                                                                                           -1, -1, 0):
            raise UnsafePickleError("holds a dtype with an unusual state; a Planetoid raw file holds plain "
                                    "numeric arrays")
        if order in "<>" and self.real.itemsize > 1:
            self.real = self.real.newbyteorder(order)


def _real_dtype(dtype) -> np.dtype:
    if not isinstance(dtype, _DType):
        raise UnsafePickleError("builds an array without a numeric dtype; not loaded")
    return dtype.real


class _Array(np.ndarray):
    """An array as numpy pickles it: created empty by :func:`_reconstruct`, then filled
    by ``__setstate__``, which is checked first (numpy's own trusts the shape: an object
    array given a short list reads past it)."""

    def __new__(cls, *args, **kwargs):  # called only by a crafted pickle
        raise UnsafePickleError("calls numpy.ndarray directly; a Planetoid raw file never does")

    def __setstate__(self, state):
        if not isinstance(state, tuple) or len(state) not in (4, 5):
            raise UnsafePickleError("holds an array with an unreadable state")
        shape, dtype, fortran, data = state[-4:]
        dtype = _real_dtype(dtype)
        if not (isinstance(shape, tuple) and all(type(d) is int and d >= 0 for d in shape)
                and len(shape) <= 32 and isinstance(fortran, bool)):
            raise UnsafePickleError(f"holds an array of shape {str(shape)[:40]}; not loaded")
        if isinstance(data, str):  # a Python 2 byte string read as latin1
            data = data.encode("latin1")
        if not isinstance(data, bytes) or len(data) != math.prod(shape) * dtype.itemsize:
            raise UnsafePickleError(f"holds an array of shape {shape} whose data is not "
                                    f"{math.prod(shape) * dtype.itemsize} bytes of {dtype}")
        np.ndarray.__setstate__(self, (shape, dtype, fortran, data))


def _reconstruct(subtype=None, shape=None, code=None):
    """numpy's ``_reconstruct`` as a pickled array calls it (``ndarray, (0,), b'b'``)."""
    if subtype is not _Array or shape != (0,):
        raise UnsafePickleError("calls numpy's _reconstruct in a way numpy's pickles never do")
    return multiarray._reconstruct(  # numpy >= 2 (the package requires it)
        _Array, (0,), b"b")


def _bytes(*args):
    """``bytes()`` (an empty array's data); ``bytes(10**12)`` would allocate a terabyte."""
    if args:
        raise UnsafePickleError("calls bytes(...) with an argument; a Planetoid raw file never does")
    return b""


def _scalar(dtype=None, data=None):
    """A numpy scalar of a numeric dtype from exactly its bytes."""
    dtype = _real_dtype(dtype)
    if isinstance(data, str):
        data = data.encode("latin1")
    if not isinstance(data, bytes) or len(data) != dtype.itemsize:
        raise UnsafePickleError(f"holds a {dtype} scalar that is not {dtype.itemsize} bytes")
    return np.frombuffer(data, dtype=dtype)[0]


class CSRState:
    """What a pickled ``scipy.sparse.csr_matrix`` holds: its attributes, unchecked.

    A pickle makes it with ``csr_matrix.__new__`` and sets its ``__dict__``; here that
    gives this inert object, which :func:`dropedge_core._raw_arrays.csr_from_state`
    checks (index ranges, ``indptr``) before any scipy code sees the arrays.

    Args:
        *args (object): refused: a crafted pickle calling ``csr_matrix(...)``.
        **kwargs (object): refused likewise.

    Raises:
        UnsafePickleError: always, when constructed directly.
    """

    def __init__(self, *args, **kwargs):  # called only by a crafted pickle
        raise UnsafePickleError("calls csr_matrix(...) directly; a Planetoid raw file holds a matrix's "
                                "state only")


class _Restricted(pickle.Unpickler):
    def find_class(self, module: str, name: str):
        if (module, name) not in ALLOWED:
            raise UnsafePickleError(f"refers to {module}.{name}, which a Planetoid raw file never holds "
                                    f"(it would run code); not loaded")
        if name == "bytes":
            return _bytes
        if module in ("__builtin__", "builtins"):
            return getattr(builtins, name)
        if module == "_codecs":
            return codecs.encode
        if module == "collections":
            return collections.defaultdict
        if module.startswith("scipy"):
            return CSRState
        return {"ndarray": _Array, "dtype": _DType, "_reconstruct": _reconstruct, "scalar": _scalar}[name]

    def persistent_load(self, pid):
        raise UnsafePickleError("uses persistent ids, which a Planetoid raw file never holds; not loaded")


def max_items() -> int:
    """The most items an unpickled object may expand to: ``DROPEDGE_MAX_MEMORY_GB`` over
    :data:`ITEM_BYTES` (134 million at the default 8 GiB; PubMed's graph has 108,365)."""
    return limits.memory_limit()[0] // ITEM_BYTES


def expanded_items(obj: object, limit: int) -> int:
    """How many items ``obj`` holds when every container is flattened, shared references
    counted each time they appear (what ``list(chain(...))`` or ``torch.tensor`` of it
    would build); stops counting above ``limit``.

    Each distinct container is visited once (its count is memoised by identity), so a
    "billion laughs" file is counted in time proportional to its size, not to its
    expansion.

    Args:
        obj (object): the unpickled object.
        limit (int): stop counting above it.

    Returns:
        int: the count, or a number above ``limit``.

    Raises:
        UnsafePickleError: a container that contains itself (it expands forever).
    """
    sizes: dict[int, int] = {}
    on_path: set[int] = set()
    stack: list[tuple[object, bool]] = [(obj, False)]
    while stack:
        item, done = stack.pop()
        key = id(item)
        count, inner = _contents(item)
        if done:
            on_path.discard(key)
            sizes[key] = min(limit + 1, count + sum(sizes[id(c)] for c in inner))
        elif key in on_path:
            raise UnsafePickleError("holds a list that contains itself (it would expand forever); not loaded")
        elif key not in sizes:
            on_path.add(key)
            stack.append((item, True))
            stack.extend((c, False) for c in inner if id(c) not in sizes)
    return sizes[id(obj)]


_CONTAINERS = (list, tuple, dict, CSRState, np.ndarray)


def _contents(item: object) -> tuple[int, list]:
    """The number of items ``item`` holds directly, and those that are containers.

    An array counts its elements: one array referenced a thousand times in a neighbour
    list (two bytes a reference) becomes a thousand copies when the list is stacked."""
    if isinstance(item, np.ndarray):
        return int(item.size), []
    if isinstance(item, CSRState):
        item = list(vars(item).values())
    elif isinstance(item, dict):
        item = [*item.keys(), *item.values()]
    elif not isinstance(item, (list, tuple)):
        return 0, []
    return len(item), [c for c in item if isinstance(c, _CONTAINERS)]


def loads(data: bytes) -> object:
    """Unpickle ``data`` with only :data:`ALLOWED` globals (``latin1`` for numpy's
    Python 2 byte strings), then check its expansion (:func:`expanded_items`).

    Args:
        data (bytes): a pickle.

    Returns:
        object: the object.

    Raises:
        UnsafePickleError: a refused global, a crafted array or an expansion too large.
    """
    obj = _Restricted(io.BytesIO(data), encoding="latin1").load()
    limit = max_items()
    if expanded_items(obj, limit) > limit:
        raise UnsafePickleError(f"expands to more than {limit} items (a list or array referenced "
                                f"many times), above the memory limit (DROPEDGE_MAX_MEMORY_GB); not loaded")
    return obj


def load(path: str | Path) -> object:
    """Unpickle the file at ``path`` with :func:`loads`.

    Args:
        path (str or Path): the file.

    Returns:
        object: the object.

    Raises:
        UnsafePickleError: a refused global, persistent ids, a crafted array, dtype or
            expansion, or not a pickle (one line, naming the file).
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


