"""dropedge_explorer: everything the command line and the app compute on top of the
:mod:`dropedge_core` library — datasets from a user's CSV files, the training engine, the
studies, the results store, the figures, the command line.

The layers, bottom up (docs/ARCHITECTURE.md); each imports only from below, and all of
them from the library's public face (``dropedge_core``'s ``__all__``), never its internals:

- :mod:`dropedge_explorer.data`: a user's CSV graph, the paper's tables and presets;
- :mod:`dropedge_explorer.training`: the run's config, recipes and the trainer;
- :mod:`dropedge_explorer.store`, :mod:`dropedge_explorer.sweep_workers`: the results store
  and sweep workers;
- :mod:`dropedge_explorer.studies`: what the command line and the app share;
- :mod:`dropedge_explorer.jobs`: the app's training jobs, queued fairly, run in worker processes;
- :mod:`dropedge_explorer.figures`: tables in, Plotly figures out;
- :mod:`dropedge_explorer.cli`: the command line (``dropedge``, ``python -m dropedge_core``).

Beside them, what every layer may use: :mod:`dropedge_explorer.env` (the environment's
settings), :mod:`dropedge_explorer.paths` and :mod:`dropedge_explorer.locations` (where files
and stores are), :mod:`dropedge_explorer.links` (a page's state as URL query parameters),
:mod:`dropedge_explorer.databases` (a database server's contents and
grants), :mod:`dropedge_explorer.memory` (what a run will need, and the limit it is checked
against: ``$DROPEDGE_MAX_MEMORY_GB``, handed to the library too). Internals are
``_``-prefixed modules (Optuna's convention: no stable names): ``_lazy``, ``_sqlite_locks``,
``_privileges`` here, and one or more in each package, named in its docstring.
This package never imports Streamlit.
"""
__version__ = "0.1.0"

__all__: list[str] = []  # nothing re-exported: the public modules above, by name
