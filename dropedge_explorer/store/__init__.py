"""The results store: one row per training run, in an embedded SQLite file or on a
database server, through SQLAlchemy.

Where: ``path`` — default ``$DROPEDGE_RESULTS``, else ``results/results.sqlite``. A file
path (or ``sqlite:///path``) is an embedded SQLite database, the default for one machine;
a ``postgresql://user[:password]@host[:port]/database`` URL puts the store on a server that
sweep workers on several machines and the app share (:mod:`dropedge_explorer.locations` parses
it; a missing driver or a refusing server is one line). Same tables either way.

The public surface is the names below (``__all__``), imported from this package; its
modules are internals (``_``-prefixed, as Optuna's ``storages/_rdb``), one idea each:

* ``_schema`` — the tables, the run key (:func:`run_key`), :data:`SCHEMA_VERSION`;
* ``_versions`` — one module per schema version, upgrading older rows on open;
* ``_runs`` — :class:`ResultStore`: open (inspect first, refuse what is not ours),
  put, get, delete, the table of all runs;
* ``_claims`` — the claim and lease SQL the sweep workers share (:mod:`dropedge_explorer.sweep_workers`);
* ``_connection`` — the SQLite engine, WAL, errors as one typed line: callers match
  :class:`StoreUnavailable` (may pass: a lock, a server restarting; :class:`StoreBusy` after
  the announced wait), :class:`ForeignStore`, :class:`DamagedStore` or :class:`StoreError`
  by type, never by message.

Exports (CSV, parquet) live with the other run tables in :mod:`dropedge_explorer.studies.run_tables`.
"""
from __future__ import annotations

from dropedge_explorer.store._connection import (
           DamagedStore,
           ForeignStore,
           StoreBusy,
           StoreError,
           StoreLocked,
           StoreUnavailable,
)
from dropedge_explorer.store._runs import ResultStore
from dropedge_explorer.store._schema import (
           CLAIMS,
           MARKER_COLUMNS,
           NOT_IN_KEY,
           SCHEMA_VERSION,
           TABLE,
           canonical_json,
           run_key,
)

__all__ = ["CLAIMS", "DamagedStore", "ForeignStore", "MARKER_COLUMNS", "NOT_IN_KEY", "SCHEMA_VERSION",
           "TABLE", "ResultStore", "StoreBusy", "StoreError", "StoreLocked", "StoreUnavailable",
           "canonical_json", "run_key"]
