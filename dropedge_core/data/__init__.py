"""The data layer: datasets, their raw files checked, user CSV graphs, the paper's tables."""

__all__: list[str] = []  # nothing re-exported: import the modules by name
