"""dropedge_core: DropEdge++ samplers, backbones, MEN and over-smoothing diagnostics.

Implements "Structure-Aware DropEdge Towards Deep Graph Convolutional Networks"
(DropEdge++). The layers, bottom up (docs/ARCHITECTURE.md):

- :mod:`dropedge_core.method`: the paper's mathematics, torch only (graph, samplers,
  normalization, metrics, models);
- :mod:`dropedge_core.data`: datasets, a user's CSV graph, the paper's tables and presets;
- :mod:`dropedge_core.training`: the run's config, recipes and the trainer;
- :mod:`dropedge_core.store`, :mod:`dropedge_core.claims`: the results store and sweep workers;
- :mod:`dropedge_core.studies`: what the command line and the app share;
- :mod:`dropedge_core.figures`: tables in, Plotly figures out;
- :mod:`dropedge_core.cli`: the command line.

The public names ``datasets``, ``samplers``, ``metrics``, ``normalization`` and ``Graph``
are importable from the package itself. This package never imports Streamlit.
"""
from dropedge_core.data import datasets
from dropedge_core.method import metrics, normalization, samplers
from dropedge_core.method.graph import Graph

__all__ = ["Graph", "datasets", "metrics", "normalization", "samplers"]
__version__ = "0.1.0"
