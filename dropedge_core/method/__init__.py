"""The method: graphs, samplers, normalisations, metrics, models (torch only).

Public modules (import them by name; ``datasets``, ``samplers``, ``metrics``,
``normalization`` and ``Graph`` are also importable from :mod:`dropedge_core`):

* :mod:`.graph` — the :class:`~.graph.Graph` every part works on;
* :mod:`.samplers` — the paper's edge samplers (Algorithm 1);
* :mod:`.normalization` — the per-layer adjacency normalisations;
* :mod:`.metrics` — MEN and the over-smoothing diagnostics;
* :mod:`.models` — the four backbones.

Internals (``_``-prefixed, Optuna's convention; no stable names): ``_nested_draws`` (the
nested redraw walk), ``_pattern`` and ``_sparse_products`` (the shared sparsity pattern
and its products), ``_seed_stack`` (weights stacked over seeds), ``_streams`` (the
sampler stream ids), ``_limits``, ``_authors_models`` (the authors' models).
"""

__all__: list[str] = []  # nothing re-exported: the public modules above, by name
