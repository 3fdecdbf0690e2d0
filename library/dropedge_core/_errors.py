"""The errors of the data layer: a dataset that cannot be used, or cannot be had now."""
from __future__ import annotations


class DatasetError(ValueError):
    """A dataset name, split or file is not usable; the message says why in one line."""


class DatasetUnavailable(DatasetError):
    """A dataset is neither in ``DROPEDGE_DATA``, nor cached, nor downloadable now."""
