"""Studies: what the command line and the app share (sampling, MEN, depth study, sweep,
tuning, the per-cell search). Each study takes settings, runs the method, and returns
tables; neither the CLI nor a page rebuilds one.

Public modules (import them by name; nothing is re-exported here):

* sampling and teaching: :mod:`.sampling`, :mod:`.edge_drawing`, :mod:`.graph_layout`,
  :mod:`.teaching`, :mod:`.merging`, :mod:`.theory`;
* the lesson: :mod:`.lesson`, :mod:`.lesson_steps`, :mod:`.lesson_climax`;
* the depth study and the paper's tables: :mod:`.depth`, :mod:`.depth_view`,
  :mod:`.cells`, :mod:`.ordering`, :mod:`.own_runs`, :mod:`.paper_views`,
  :mod:`.run_tables`, :mod:`.fingerprints`, :mod:`.reproduce`, :mod:`.authors`;
* runs into the store: :mod:`.sweep`;
* tuning: :mod:`.tuning`, :mod:`.tuned`, :mod:`.tuning_noise`, :mod:`.cell_search`.

Internals (``_``-prefixed, Optuna's convention; no stable names): ``_tuning_space`` and
``_tuning_storage`` (the search space, Optuna's storage), ``_trial_budget``,
``_stopping`` (signals), ``_snapshot_files`` (the class-merging snapshots on disk).
"""

__all__: list[str] = []  # nothing re-exported: the public modules above, by name
