"""Sweep workers sharing one grid through the results store's claims.

Every worker — ``python -m dropedge_core sweep`` on any machine, the app's "Run missing" —
walks the same list of runs and, for each run not stored yet, asks the store for a claim
(:meth:`~dropedge_explorer.store.ResultStore.claim`, atomic). Only the worker that got it
trains the run; a :class:`LeaseRenewer` renews the claim's lease while it trains, and storing
the run drops the claim in the same transaction. The others move on to the next run, so N
workers split the grid and no run is trained twice. When only runs claimed by others are
left, a worker waits for them: they get stored, or their worker died (SIGKILL, machine
lost), its lease runs out and the claim is taken over.

Example (a worker's loop; ``tests/store/test_storage_targets.py`` and
``tests/store/test_postgres.py`` run it)::

    runs = ClaimedRuns(store, configs, lease=120)
    for claim in runs:
        result = train(claim.config, stop_event=claim.lost)
        if result.reason != "stopped":
            store.put(result)

(:func:`dropedge_explorer.studies.sweep.run_claimed` is that loop with the one storing rule;
with ``batch_seeds`` it walks :meth:`ClaimedRuns.batches`: every free seed of a cell
claimed at once, each claim renewed and lost on its own.)
"""
from __future__ import annotations

import os
import socket
import threading
import time
import uuid
from collections.abc import Callable, Hashable, Iterator, Sequence
from dataclasses import dataclass, field

from dropedge_explorer.store import ResultStore, StoreError, run_key
from dropedge_explorer.training import TrainConfig

#: Seconds a claim lives without renewal: a dead worker's run is taken over after this.
DEFAULT_LEASE = 120.0


def worker_id() -> str:
    """``host:pid:random``: who holds a claim (unique per worker, readable in the store)."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


def check_lease(lease: float) -> float:
    """A lease in seconds, 1 s .. 1 day.

    Args:
        lease (float): the lease asked for, in seconds.

    Raises:
        ValueError: not a number, or outside ``1 .. 86400`` (the message names the value).

    Example:
        >>> check_lease(60)
        60.0
    """
    try:
        value = float(lease)
    except (TypeError, ValueError):
        raise ValueError(f"lease must be a number of seconds (got {lease!r})") from None
    if not 1.0 <= value <= 86400.0:
        raise ValueError(f"lease must be between 1 and 86400 seconds (got {lease!r})")
    return value


class LeaseRenewer:
    """Renews one claim every ``lease / 3`` seconds in a daemon thread until :meth:`close`.

    :attr:`lost` is set when the claim is no longer this worker's (it expired and another
    worker took it over) or the store could not be reached for a whole lease: pass it to
    the trainer as its stop flag, so the run stops and is not stored twice.
    """

    def __init__(self, store: ResultStore, key: str, owner: str, lease: float):
        self.store, self.key, self.owner, self.lease = store, key, owner, lease
        self.lost = threading.Event()
        self.error: str | None = None
        self._closed = threading.Event()
        self._thread = threading.Thread(target=self._renew, name="dropedge-claim-lease", daemon=True)
        self._thread.start()

    def _renew(self) -> None:
        last_ok = time.monotonic()
        while not self._closed.wait(self.lease / 3):
            try:
                mine = self.store.renew(self.key, self.owner, self.lease)
            except StoreError as exc:  # a store blip: keep trying while the lease may still hold
                self.error = str(exc)
                if time.monotonic() - last_ok > self.lease:
                    self.lost.set()
                    return
                continue
            if not mine:
                self.error = "the claim was taken over by another worker"
                self.lost.set()
                return
            last_ok, self.error = time.monotonic(), None

    def close(self) -> None:
        self._closed.set()
        self._thread.join(timeout=5)


@dataclass
class Claim:
    """A run this worker holds: train :attr:`config`, stop when :attr:`lost` is set.

    Args:
        config (TrainConfig): the run's settings.
        key (str): the run's key (:func:`dropedge_explorer.store.run_key`).
        renewer (LeaseRenewer): the thread that renews the claim's lease and sets
            :attr:`lost` when another worker took it over.
    """

    config: TrainConfig
    key: str
    renewer: LeaseRenewer = field(repr=False)

    @property
    def lost(self) -> threading.Event:
        return self.renewer.lost


class ClaimedRuns:
    """Iterate over the runs of ``configs`` this worker claims, until every run is stored
    (by anyone), failed here, or ``stop_event`` is set.

    Args:
        store (ResultStore): the shared results store.
        configs (Sequence[TrainConfig]): the grid, in the order to train it (duplicates count
            once).
        owner (str, optional): this worker's name in the claims (``None``:
            :func:`worker_id`). (default: :obj:`None`)
        lease (float, optional): seconds a claim lives without renewal.
            (default: :obj:`DEFAULT_LEASE`)
        stop_event (threading.Event, optional): when set, no further run is claimed (the
            running one is the caller's). (default: :obj:`None`)
        recheck (float, optional): seconds between looks at runs claimed by others
            (``None``: ``lease / 4``, at most 5 s). (default: :obj:`None`)

    Counts, for a progress line: :attr:`total` (distinct runs), :attr:`trained` (runs this
    worker stored), :attr:`skipped` (stored by others or before), :attr:`failed` and
    :attr:`waiting` (runs claimed by other live workers, when nothing else is left).
    The caller reports a run it stored with :meth:`stored`, one that failed with
    :meth:`failed_run`; a run it neither stored nor failed is released for others.
    :meth:`batches` hands out the runs of one group together (a cell's seeds, trained as
    one batch).
    """

    def __init__(self, store: ResultStore, configs: Sequence[TrainConfig], owner: str | None = None,
                 lease: float = DEFAULT_LEASE, stop_event: threading.Event | None = None,
                 recheck: float | None = None):
        self.store = store
        self.owner = owner or worker_id()
        self.lease = check_lease(lease)
        self.stop_event = stop_event or threading.Event()
        self.recheck = recheck if recheck is not None else max(0.2, min(5.0, self.lease / 4))
        self.pending: dict[str, TrainConfig] = {}
        for config in configs:
            self.pending.setdefault(run_key(config), config)
        self.total = len(self.pending)
        self.trained = 0
        self.skipped = 0
        self.failed = 0
        self.waiting = 0
        self.trained_keys: list[str] = []
        self._outcome: dict[str, str] = {}

    @property
    def over(self) -> int:
        """Runs dealt with: trained here, stored by others, failed here."""
        return self.trained + self.skipped + self.failed

    def stored(self, claim: Claim) -> None:
        """The caller stored this claim's run (the store dropped the claim)."""
        self._outcome[claim.key] = "stored"

    def failed_run(self, claim: Claim) -> None:
        """The run failed here: release it (another worker may try) and never retry it here."""
        self._outcome[claim.key] = "failed"

    def _drop_stored(self) -> None:
        stored = self.store.keys() & self.pending.keys()
        for key in stored:
            del self.pending[key]
        self.skipped += len(stored)

    def _settle(self, claim: Claim) -> None:
        """The caller is done with ``claim``: stop renewing it, release it unless its run
        was stored, and count it."""
        claim.renewer.close()
        outcome = self._outcome.pop(claim.key, None)
        if outcome != "stored":  # not stored: let another worker have it
            self.store.release(claim.key, self.owner)
        if outcome == "stored":
            self.trained += 1
            self.trained_keys.append(claim.key)
            del self.pending[claim.key]
        elif outcome == "failed":
            self.failed += 1
            del self.pending[claim.key]
        # else: stopped or lost; a lost claim is another worker's now, kept pending

    def _groups(self, group: Callable[[TrainConfig], Hashable] | None) -> list[list[str]]:
        """The pending runs' keys, by ``group`` (in the grid's order; ``None``: one run each)."""
        if group is None:
            return [[key] for key in self.pending]
        groups: dict[Hashable, list[str]] = {}
        for key, config in self.pending.items():
            groups.setdefault(group(config), []).append(key)
        return list(groups.values())

    def __iter__(self) -> Iterator[Claim]:
        batches = self.batches()
        try:
            for claims in batches:
                yield claims[0]
        finally:
            batches.close()  # settles the claim of a run the caller did not finish

    def batches(self, group: Callable[[TrainConfig], Hashable] | None = None) -> Iterator[list[Claim]]:
        """Like iterating, but the runs of one ``group`` (e.g. a cell's seeds) together: each
        item is every run of a group that this worker could claim now (a list of
        :class:`Claim`, each renewed on its own while the caller trains them; the group's
        runs held by others are left to them). ``group=None``: one run per item.

        The caller reports each claim with :meth:`stored` or :meth:`failed_run` (or neither:
        released); every claim of an item is settled when the caller asks for the next.
        """
        while self.pending and not self.stop_event.is_set():
            self._drop_stored()
            took_one = False
            for keys in self._groups(group):
                claims: list[Claim] = []
                try:
                    for key in keys:
                        if self.stop_event.is_set():
                            break
                        if self.store.claim(key, self.owner, self.lease):  # else stored meanwhile, or
                            claims.append(Claim(self.pending[key], key,  # a live claim of another worker
                                                LeaseRenewer(self.store, key, self.owner, self.lease)))
                    if claims and not self.stop_event.is_set():
                        took_one = True
                        self.waiting = 0
                        yield claims
                finally:
                    for claim in claims:
                        self._settle(claim)
                if self.stop_event.is_set():
                    return
            if self.pending and not took_one:
                self._drop_stored()
                self.waiting = len(self.pending)
                if self.pending:
                    self.stop_event.wait(self.recheck)  # others hold the rest: wait for them or their lease

__all__ = ["Claim", "ClaimedRuns", "DEFAULT_LEASE", "check_lease", "worker_id"]
