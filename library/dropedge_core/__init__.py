"""dropedge_core: the DropEdge++ library — samplers, normalisations, MEN and over-smoothing
metrics, the backbones, the datasets and a PyTorch Geometric front end.

Implements "Structure-Aware DropEdge Towards Deep Graph Convolutional Networks"
(DropEdge++). It imports torch and numpy (scipy where a function needs it, on first use;
torch_geometric for the PyG front end, the PyG datasets and karate) and nothing else of this
repository: the explorer (:mod:`dropedge_explorer`: training, studies, the results store,
figures, the command line) and the Streamlit app sit on top of it (docs/ARCHITECTURE.md).

Its public modules:

- :mod:`dropedge_core.graph`: :class:`Graph` (undirected edges once, ``u < v``), CSR builders;
- :mod:`dropedge_core.samplers`: keep counts, kernels, successive sampling; LI, LID, LDD, FD,
  DropEdge++ (``samplers.make``), each sampler's random stream version;
- :mod:`dropedge_core.normalization`: NA, FOG, AN, ANS, ARW for all layers at once,
  :class:`AdjacencyBuilder` (every epoch's adjacencies over one fixed CSR pattern);
- :mod:`dropedge_core.metrics`: MEN, edge numbers, layer distances, Dirichlet energy, MAD,
  the distance to the over-smoothing subspace;
- :mod:`dropedge_core.models`: GCN, ResGCN, JKNet, APPNP*;
- :mod:`dropedge_core.datasets`: the built-in (karate, CSBM), Planetoid and ``.npz`` datasets
  with their splits, read as data (a restricted unpickler, every array checked);
- :mod:`dropedge_core.pyg`: the samplers with PyG's conventions;
- :mod:`dropedge_core.limits`: what the library refuses (``MAX_LAYERS``, inputs that cannot fit
  in memory); :mod:`dropedge_core.files`: the data directories, files written whole;
  :mod:`dropedge_core.echo`: how a refused value is quoted in a message.

Every other module is private (``_``-prefixed: no stable names). The names below are
importable from the package itself (on first use: importing torch takes seconds, and
``python -m dropedge_core`` imports this package before its ``__main__`` can set the
handlers that make Ctrl-C in those seconds one line)::

    from dropedge_core import datasets, samplers, metrics, normalization
    g = datasets.load("karate")
    masks = samplers.make("dropedge++").sample(g, 4, torch.Generator().manual_seed(0))
    metrics.men(g, masks)
"""
import importlib

__version__ = "0.1.0"

#: public name -> the module that defines it (imported on first use)
_LAZY = {
    # modules
    "datasets": "dropedge_core.datasets", "echo": "dropedge_core.echo", "files": "dropedge_core.files",
    "graph": "dropedge_core.graph", "limits": "dropedge_core.limits", "metrics": "dropedge_core.metrics",
    "models": "dropedge_core.models", "normalization": "dropedge_core.normalization",
    "pyg": "dropedge_core.pyg", "samplers": "dropedge_core.samplers",
    # the graph and its errors
    "Graph": "dropedge_core.graph", "GraphError": "dropedge_core.graph",
    "DatasetError": "dropedge_core._errors", "DatasetUnavailable": "dropedge_core._errors",
    "MemoryLimitError": "dropedge_core.limits", "set_memory_limit": "dropedge_core.limits",
    "MAX_LAYERS": "dropedge_core.limits",
    # each sampler's random stream version (which masks a seed draws)
    "STREAMS": "dropedge_core._streams", "stream_version": "dropedge_core._streams",
    # adjacencies and products for a training loop
    "AdjacencyBuilder": "dropedge_core.normalization", "spmm": "dropedge_core._sparse_products",
    "with_transpose": "dropedge_core._sparse_products",
    # S seeds' models as one (weights stacked on a seed dimension, block-diagonal products)
    "SeedStack": "dropedge_core._seed_stack", "block_diagonal": "dropedge_core._seed_stack",
    # the four backbones as the authors' code builds them
    "make_authors_model": "dropedge_core._authors_models", "AuthorsGCN": "dropedge_core._authors_models",
}
_MODULES = {name for name, home in _LAZY.items() if home == f"dropedge_core.{name}"}

__all__ = ["AdjacencyBuilder", "AuthorsGCN", "DatasetError", "DatasetUnavailable", "Graph",
           "GraphError", "MAX_LAYERS", "MemoryLimitError", "STREAMS", "SeedStack",
           "block_diagonal", "datasets", "echo", "files", "graph", "limits", "make_authors_model",
           "metrics", "models", "normalization", "pyg", "samplers", "set_memory_limit", "spmm",
           "stream_version", "with_transpose"]


def __getattr__(name: str):
    if name not in _LAZY:
        raise AttributeError(f"module 'dropedge_core' has no attribute {name!r}")
    module = importlib.import_module(_LAZY[name])
    value = module if name in _MODULES else getattr(module, name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
