"""The random stream version of each named sampler: which masks a seed draws.

A sampler's law (which edge sets are how likely) is its contract; its stream (which masks one
seed draws) is an accident of the code, and a faster rewrite may change it while keeping the
law. Runs made with an older stream cannot be made again, so the stream version enters the
run key (:func:`dropedge_explorer.store.run_key`) and every bundled run carries the version it
was drawn from (``dropedge_explorer/assets/results/README.md``).
"""
from __future__ import annotations

#: The version of each named sampler's random stream (the masks a seed draws), where it is
#: not 1. Bump a sampler's version whenever a change makes a seed draw other masks (the law
#: may stay the same): the version enters the run key (:func:`dropedge_explorer.store.run_key`),
#: so runs of an older stream stop counting for today's configs and are re-run, and
#: ``tests/studies/test_bundled_fingerprints.py`` names every bundled run a change alters.
#: 2 for DropEdge++: the nested draws' rewrite (``nested_draws._largest`` over a floor, the
#: lazily compacted pool) ranks keys in another order: most runs from L = 6 on draw other masks.
STREAMS: dict[str, int] = {"dropedge++": 2}


def stream_version(name: str) -> int:
    """The random stream version of the named sampler ``name`` (1 unless :data:`STREAMS` says
    otherwise).

    Args:
        name (str): a name of :data:`~dropedge_core.samplers.NAMES`.

    Returns:
        int: the version, 1 or more.
    """
    return STREAMS.get(name, 1)
