"""Jobs: the app's training work, queued fairly and run in worker processes.

Public modules (import them by name; nothing is re-exported here):

* :mod:`.queue` — :class:`~dropedge_explorer.jobs.queue.JobQueue` (at most N jobs at once,
  the rest in line, round-robin across owners; one reader thread for every worker's
  events) and :class:`~dropedge_explorer.jobs.queue.Job`;
* :mod:`.records` — :class:`~dropedge_explorer.jobs.records.RunRecord` (one run as its
  watchers see it), its label, the runs as tables;
* :mod:`.registry` — :class:`~dropedge_explorer.jobs.registry.JobRegistry` (the server's
  jobs by id, each with its owner token, finished ones kept bounded; :data:`REGISTRY`);
* :mod:`.handles` — :class:`~dropedge_explorer.jobs.handles.SweepJob` and
  :class:`~dropedge_explorer.jobs.handles.TuningJob` (a page's handle on a sweep or a study
  in the queue: what to submit, and its progress in words);
* :mod:`.live` — :class:`~dropedge_explorer.jobs.live.TrainingSession` (a Live training
  page's jobs in the server's queue and what changed since a reader last looked) and
  :func:`~dropedge_explorer.jobs.live.server_queue` (the server's one queue).

Internals (``_``-prefixed; no stable names): ``_worker`` (the worker process's body: the
command line's ``train --store`` per config, ``sweep``'s claimed runs or ``tune``'s study,
events sent back).
"""

__all__: list[str] = []  # nothing re-exported: the public modules above, by name
