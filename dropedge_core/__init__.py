"""dropedge_core: DropEdge++ samplers, backbones, MEN and over-smoothing diagnostics.

Implements "Structure-Aware DropEdge Towards Deep Graph Convolutional Networks"
(DropEdge++). Modules: ``datasets``, ``samplers``, ``normalization``, ``metrics``.
This package never imports Streamlit.
"""
from . import datasets, metrics, normalization, samplers
from .graph import Graph

__all__ = ["Graph", "datasets", "metrics", "normalization", "samplers"]
__version__ = "0.1.0"
