"""The data layer: datasets, their raw files checked, user CSV graphs, the paper's tables.

Public modules (import them by name; nothing is re-exported here):

* :mod:`.datasets` — Cora, CiteSeer (PyG's raw layout, read as data) and the built-in
  graphs by name, with their splits;
* :mod:`.synthetic` — the built-in graphs (karate, CSBM);
* :mod:`.csv_graph` — a user's own graph from CSV files; :mod:`.csv_reader` — their text
  read as data only;
* :mod:`.presets` — the paper's best hyperparameters; :mod:`.reference` — the paper's
  reported numbers;
* :mod:`.errors` — :class:`~.errors.DatasetError` and :class:`~.errors.DatasetUnavailable`.

Internals (``_``-prefixed, Optuna's convention; no stable names): ``_raw_arrays`` and
``_safe_pickle`` (PyG's raw files checked before use), ``_csv_files`` and ``_csv_guards``
(the CSV files' limits), ``_splits``.
"""

__all__: list[str] = []  # nothing re-exported: the public modules above, by name
