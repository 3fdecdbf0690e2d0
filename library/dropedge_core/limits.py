"""What the library refuses: models deeper than :data:`MAX_LAYERS`, inputs that cannot fit
in memory.

The layer limit is shared by every front end (samplers, the explorer's training config and
command line; the app's sidebar offers fewer). The memory limit: a ten-byte file can claim a
ten-million-node graph, a Planetoid header a matrix of 10^12 cells, so the library estimates
what an input asks for before it allocates and refuses, with one line, what exceeds the
machine's memory (a CPU: physical RAM; a CUDA device: its free memory). That is a fact of the
machine, not a setting: an application that wants a lower limit (the explorer's
``$DROPEDGE_MAX_MEMORY_GB``) hands the library its own rule with :func:`set_memory_limit`.
"""
from __future__ import annotations

import os
from collections.abc import Callable

import torch

GIB = 1 << 30

#: The most layers a sample or a model may have: ``(L, M)`` masks and ``L`` adjacencies
#: grow linearly with it, and 256 is four times the paper's deepest model (64 layers).
MAX_LAYERS = 256

#: the rule an application set (:func:`set_memory_limit`), else ``None``: the machine's
_RULE: list[Callable[[torch.device], tuple[int, str]] | None] = [None]


class MemoryLimitError(ValueError):
    """A computation would need more memory than the limit allows."""


def human(num_bytes: float) -> str:
    """``12.3 GiB``, ``512 MiB``, ``3 KiB``.

    Args:
        num_bytes (float): a size in bytes.

    Example:
        >>> human(12.3 * 2**30), human(512 * 2**20), human(3 * 1024), human(100)
        ('12.3 GiB', '512 MiB', '3 KiB', '100 bytes')
    """
    for unit, size in (("GiB", GIB), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if num_bytes >= size:
            return f"{num_bytes / size:.1f}".removesuffix(".0") + f" {unit}"
    return f"{int(num_bytes)} bytes"


def graph_bytes(num_nodes: int, num_edges: int, num_features: int) -> int:
    """A :class:`~dropedge_core.graph.Graph`: dense float32 features, the undirected and
    directed edge lists, labels and masks (and the float64 copy a normalisation makes).

    Args:
        num_nodes (int): ``N``.
        num_edges (int): undirected edges ``M``.
        num_features (int): ``C``.

    Example:
        >>> graph_bytes(34, 78, 34)  # karate: 34·34·(4 + 8) + 78·6·8 + 34·(8 + 3)
        17990
    """
    return num_nodes * num_features * (4 + 8) + num_edges * 6 * 8 + num_nodes * (8 + 3)


def machine_limit(device: torch.device | str | None = None) -> tuple[int, str]:
    """What ``device`` can hold at all, and where that number comes from: the CPU's
    physical memory (``os.sysconf``), a CUDA device's free memory now.

    Args:
        device (torch.device or str, optional): the device (``None``: the CPU).
            (default: :obj:`None`)
    """
    device = torch.device("cpu") if device is None else torch.device(device)
    if device.type == "cuda":
        free, total = torch.cuda.mem_get_info(device)
        return int(free), f"free on {device} of {human(total)}"
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"), "this machine's memory"


def set_memory_limit(rule: Callable[[torch.device], tuple[int, str]] | None) -> None:
    """Let an application decide the limit: ``rule(device)`` returns ``(bytes, where from)``
    and is asked at every check; ``None`` restores the machine's (:func:`machine_limit`).

    Args:
        rule (Callable, optional): the application's limit per device.
    """
    _RULE[0] = rule


def memory_limit(device: torch.device | str | None = None) -> tuple[int, str]:
    """The limit in force for ``device``: the application's rule, else the machine's.

    Args:
        device (torch.device or str, optional): the device (``None``: the CPU).
            (default: :obj:`None`)

    Returns:
        tuple: ``(bytes, where the number comes from)``.
    """
    device = torch.device("cpu") if device is None else torch.device(device)
    return _RULE[0](device) if _RULE[0] is not None else machine_limit(device)


def check(needed: int, what: str, hint: str = "", device: torch.device | str | None = None) -> int:
    """Raise :class:`MemoryLimitError` when ``needed`` bytes exceed :func:`memory_limit`.

    Args:
        needed (int): the estimate in bytes.
        what (str): what would need it, for the message.
        hint (str, optional): what to change, appended to the message. (default: :obj:`""`)
        device (torch.device or str, optional): where it would be allocated; ``None``: the
            CPU. (default: :obj:`None`)

    Returns:
        ``needed``.

    Example:
        >>> check(10, "ten bytes")
        10
        >>> check(1 << 62, "a 2^62-byte graph")
        Traceback (most recent call last):
        ...
        dropedge_core.limits.MemoryLimitError: a 2^62-byte graph would need about ...
    """
    bound, source = memory_limit(device)
    if needed > bound:
        more = f"; {hint}" if hint else ""
        kind = "memory" if device is None or torch.device(device).type == "cpu" else f"{device} memory"
        raise MemoryLimitError(f"{what} would need about {human(needed)} of {kind}, above the limit of "
                               f"{human(bound)} ({source}){more}")
    return needed


__all__ = ["MAX_LAYERS", "MemoryLimitError", "check", "graph_bytes", "human", "machine_limit",
           "memory_limit", "set_memory_limit"]
