"""The app's plumbing beside ``dropedge_core``: what every page shares, one import away.

A page reads ``import app_shared as ui`` and calls ``ui.selection()``,
``ui.page_header(...)`` and the like; each name lives in its own module:

* :mod:`app_shared.pickers`: the sidebar's shared pickers and their values.
* :mod:`app_shared.graph_loading`: the selected graph, its data-source line, cached layouts.
* :mod:`app_shared.text`: user text made safe for Markdown, paths kept private.
* :mod:`app_shared.browser_history`: the state in the URL, the shareable link, the browser's history.
* :mod:`app_shared.st_internals`: every use of Streamlit's internals, version-checked.
* A Live training run: :mod:`app_shared.live_runs` (the page's session, owner and link) →
  :mod:`dropedge_explorer.jobs.live` (the page's jobs in the server's queue) →
  :mod:`dropedge_explorer.jobs` (the fair queue; worker processes train and store).
* Sweeps and tuning studies: :mod:`dropedge_explorer.jobs.handles` (a page's handle on its
  job in the same queue); jobs that outlive the tab: :mod:`dropedge_explorer.jobs.registry`.

No logic worth a test lives in a page: it is in ``dropedge_core`` or in a module here.
"""
from __future__ import annotations

from app_shared.graph_loading import (
    NO_LABELS,
    cached_default_center,
    cached_layout,
    current_graph,
    data_source,
    load_graph,
    page_header,
    require_labels,
)
from app_shared.pickers import (
    DATA_SEED,
    DATASET_OPTIONS,
    DEFAULT_DATASET,
    DEFAULT_LAYERS,
    DEFAULT_RATES,
    DEFAULT_SAMPLER,
    UPLOAD,
    Selection,
    data_id,
    dataset_splits,
    graph_key,
    selection,
    sidebar_pickers,
)
from app_shared.text import plain, private, store_label

__all__ = ["DATASET_OPTIONS", "DATA_SEED", "DEFAULT_DATASET", "DEFAULT_LAYERS", "DEFAULT_RATES",
           "DEFAULT_SAMPLER", "NO_LABELS", "UPLOAD", "Selection", "cached_default_center", "cached_layout",
           "current_graph", "data_id", "data_source", "dataset_splits", "graph_key", "load_graph",
           "page_header", "plain", "private", "require_labels", "selection", "sidebar_pickers",
           "store_label"]
