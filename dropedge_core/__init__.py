"""dropedge_core: DropEdge++ samplers, backbones, MEN and over-smoothing diagnostics.

Implements "Structure-Aware DropEdge Towards Deep Graph Convolutional Networks"
(DropEdge++). The layers, bottom up (docs/ARCHITECTURE.md):

- :mod:`dropedge_core.method`: the paper's mathematics, torch only (graph, samplers,
  normalization, metrics, models);
- :mod:`dropedge_core.data`: datasets, a user's CSV graph, the paper's tables and presets;
- :mod:`dropedge_core.training`: the run's config, recipes and the trainer;
- :mod:`dropedge_core.store`, :mod:`dropedge_core.sweep_workers`: the results store and sweep workers;
- :mod:`dropedge_core.studies`: what the command line and the app share;
- :mod:`dropedge_core.figures`: tables in, Plotly figures out;
- :mod:`dropedge_core.cli`: the command line;
- :mod:`dropedge_core.pyg`: the samplers for PyTorch Geometric users (nothing imports it).

Beside them, what every layer may use: :mod:`dropedge_core.env` (the environment's
settings), :mod:`dropedge_core.paths` and :mod:`dropedge_core.locations` (where files and
stores are), :mod:`dropedge_core.databases` (a database server's contents and grants),
:mod:`dropedge_core.memory` (what a run will need), :mod:`dropedge_core.echo` (bounded
quoting in messages). Internals are ``_``-prefixed modules (Optuna's convention: no
stable names): ``_lazy``, ``_sqlite_locks``, ``_privileges`` here, and one or more in
each package, named in its docstring.

The public names ``datasets``, ``samplers``, ``metrics``, ``normalization`` and ``Graph``
are importable from the package itself. This package never imports Streamlit.
"""
import importlib

__all__ = ["Graph", "datasets", "metrics", "normalization", "samplers"]
__version__ = "0.1.0"

#: the public names, imported on first use: importing torch takes seconds, and
#: ``python -m dropedge_core`` imports this package before its ``__main__`` can set the
#: handlers that make Ctrl-C / SIGTERM in those seconds one line (not a traceback, not a
#: silent death)
_LAZY = {"datasets": "dropedge_core.data.datasets", "metrics": "dropedge_core.method.metrics",
           "normalization": "dropedge_core.method.normalization", "samplers": "dropedge_core.method.samplers",
           "Graph": "dropedge_core.method.graph"}


def __getattr__(name: str):
    if name not in _LAZY:
        raise AttributeError(f"module 'dropedge_core' has no attribute {name!r}")
    module = importlib.import_module(_LAZY[name])
    value = module.Graph if name == "Graph" else module
    globals()[name] = value
    return value
