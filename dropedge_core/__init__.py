"""dropedge_core: DropEdge++ samplers, backbones, MEN and over-smoothing diagnostics.

Implements "Structure-Aware DropEdge Towards Deep Graph Convolutional Networks"
(DropEdge++). Modules: ``datasets``, ``samplers``, ``normalization``, ``metrics``.
This package never imports Streamlit.
"""
import warnings

# torch flags every CSR tensor as "beta" and warns once per process about invariant
# checks; our CSR matrices are built from validated indices, so the noise helps no one.
warnings.filterwarnings("ignore", message=r".*Sparse CSR tensor support is in beta.*")
warnings.filterwarnings("ignore", message=r".*Sparse invariant checks are implicitly disabled.*")

from . import datasets, metrics, normalization, samplers  # noqa: E402
from .graph import Graph  # noqa: E402

__all__ = ["Graph", "datasets", "metrics", "normalization", "samplers"]
__version__ = "0.1.0"
