"""The one layer limit every front end shares (samplers, the training config, the CLI).

The app's sidebar offers fewer layers (:data:`app_shared.urlstate.APP_MAX_LAYERS`, the
paper's deepest model); this module is the bound beyond which nothing samples or trains.
"""
from __future__ import annotations

#: The most layers a sample or a model may have: ``(L, M)`` masks and ``L`` adjacencies
#: grow linearly with it, and 256 is four times the paper's deepest model (64 layers).
MAX_LAYERS = 256

