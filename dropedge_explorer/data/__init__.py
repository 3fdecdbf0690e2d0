"""The explorer's data: a user's own graph from CSV files, the paper's tables and presets.
The datasets by name (Cora, CiteSeer, the built-ins; PyG's raw layout read as data) are the
library's: :mod:`dropedge_core.datasets`.

Public modules (import them by name; nothing is re-exported here):

* :mod:`.csv_graph` — a user's own graph from CSV files; :mod:`.csv_reader` — their text
  read as data only;
* :mod:`.presets` — the paper's best hyperparameters; :mod:`.reference` — the paper's
  reported numbers.

Internals (``_``-prefixed, Optuna's convention; no stable names): ``_csv_files`` and
``_csv_guards`` (the CSV files' limits).
"""

__all__: list[str] = []  # nothing re-exported: the public modules above, by name
