"""The method: graphs, samplers, normalisations, metrics, models (torch only)."""

__all__: list[str] = []  # nothing re-exported: import the modules by name
