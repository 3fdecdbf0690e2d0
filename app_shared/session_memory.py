"""Free what a closed browser session held: its upload, its figures, its references to jobs.

A session's heavy objects (the parsed upload in ``upload_parsed``, a training session or
sweep with their threads, trained snapshots) live in its ``st.session_state``. When a tab
closes, Streamlit keeps the disconnected session for a reconnect (two minutes) and then
drops it from a TTL cache that only expires entries when the cache is next touched, so the
memory stayed held until another session came or went; a job's thread kept its graph alive
longer still. Here every script run registers its session (:func:`watch_current`, from
``app.py``) with one :class:`SessionReaper`, which holds each session's state only through
a weak reference; a daemon thread sweeps every :data:`SWEEP_EVERY` seconds (or a third of
the grace, if shorter), and a session that has not been active for the grace
(``$DROPEDGE_SESSION_GRACE``, default :data:`GRACE` seconds: longer than Streamlit keeps one
for a reconnect) is released: every key dropped, the garbage collected and freed heap
handed back to the operating system (glibc's ``malloc_trim``).

Releasing never stops a job. The Live training runs, sweeps and tuning studies outlive the
tab on purpose, held by the server-wide :mod:`dropedge_explorer.jobs.registry` (where their links find
them, finished ones included) and ended only by their owner's Stop, their own limits or
the server's caps; a stop here ended a closed tab's run as ``stopped`` with nobody pressing
Stop. A running job keeps what it trains on (its graph) until it ends, then lets go of it.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import gc
import threading
import time
import weakref
from collections.abc import Callable

from app_shared import st_internals
from dropedge_explorer import env

#: Seconds a session may be inactive before its state is released (Streamlit keeps a
#: disconnected session 120 s for a reconnect: never release before it would); the default
#: of ``$DROPEDGE_SESSION_GRACE`` (:mod:`dropedge_explorer.env`).
GRACE = env.DEFAULTS.session_grace
#: Seconds between sweeps of the reaper's thread.
SWEEP_EVERY = 30.0


def trim_heap() -> bool:
    """Hand freed heap memory back to the operating system (glibc only; ``False`` elsewhere):
    without it a process that once held gigabytes keeps them although they are free."""
    name = ctypes.util.find_library("c")
    try:
        return bool(ctypes.CDLL(name).malloc_trim(0)) if name else False
    except (OSError, AttributeError):
        return False


def release(state) -> int:
    """Drop every key of ``state`` (a dict or Streamlit's session state) and return how
    many were dropped. Jobs held there are let go of, never stopped (see above)."""
    names = list(state.filtered_state) if hasattr(type(state), "filtered_state") else list(state)
    for name in names:
        try:
            del state[name]
        except KeyError:
            pass
    _forget_widgets(state)
    return len(names)


def _forget_widgets(state) -> None:
    """Drop what Streamlit's session state keeps besides the keys: old values, and each
    widget's metadata, whose callbacks (a ``format_func`` lambda of a page) hold the page
    script's globals, and with them its graph: measured on a live server, a closed tab's
    200k-node upload stayed alive through one such lambda after its keys were dropped."""
    clear = getattr(state, "clear", None)
    if callable(clear):
        clear()
    st_internals.forget_widget_metadata(state)  # Streamlit's own clear() keeps it (1.67)


class SessionReaper:
    """Sessions by id, each held weakly; :meth:`sweep` releases the ``session_state`` of
    sessions inactive for ``grace`` seconds. A session is any object with a
    ``session_state`` (Streamlit's ``AppSession``; its state, a slotted dataclass, cannot be
    referenced weakly itself).

    Args:
        is_active: ``session_id -> bool`` (Streamlit's ``Runtime.is_active_session``).
        grace: seconds of inactivity before a session's state is released.
        clock: seconds, monotonic.
        on_release: ``session_id -> None``, called for each released session (the app
            drops the session's uploaded files, which Streamlit keeps until it shuts the
            session down).
    """

    def __init__(self, is_active: Callable[[str], bool], grace: float = GRACE,
                 clock: Callable[[], float] = time.monotonic,
                 on_release: Callable[[str], None] | None = None):
        self.is_active, self.grace, self.clock, self.on_release = is_active, grace, clock, on_release
        self._states: dict[str, weakref.ref] = {}
        self._inactive_since: dict[str, float] = {}
        self._lock = threading.Lock()

    def watch(self, session_id: str, session) -> None:
        with self._lock:
            self._states[session_id] = weakref.ref(session)
            self._inactive_since.pop(session_id, None)

    def __len__(self) -> int:
        return len(self._states)

    def sweep(self) -> list[str]:
        """Release the sessions inactive for ``grace`` seconds (and forget the ones whose
        state Streamlit dropped already); return the released ids."""
        now, released, freed = self.clock(), [], False
        with self._lock:
            for session_id, ref in list(self._states.items()):
                session = ref()
                if session is None:  # Streamlit dropped it: only the heap is left to trim
                    freed = True
                elif self.is_active(session_id):
                    self._inactive_since.pop(session_id, None)
                    continue
                elif now - self._inactive_since.setdefault(session_id, now) < self.grace:
                    continue
                else:
                    release(session.session_state)
                    if self.on_release is not None:
                        self.on_release(session_id)
                    released.append(session_id)
                    freed = True
                del self._states[session_id]
                self._inactive_since.pop(session_id, None)
        if freed:
            gc.collect()
            trim_heap()
        return released


_REAPER: SessionReaper | None = None
_START = threading.Lock()


def _sweep_forever(reaper: SessionReaper) -> None:
    while True:
        time.sleep(min(SWEEP_EVERY, reaper.grace / 3))  # a short grace is kept to within a third
        try:
            reaper.sweep()
        except Exception:  # a sweep that failed is tried again at the next one
            pass


def watch_current() -> None:
    """Register the session of the running script (call on every run, from ``app.py``);
    starts the reaper's thread once per server process."""
    global _REAPER
    current = st_internals.current_session()
    if current is None:
        return  # bare mode (no server) or no supported internals: nothing is reaped
    session_id, session, runtime = current
    with _START:
        if _REAPER is None:
            # the upload's bytes stay in Streamlit's file manager until it shuts the session
            # down, which its session storage does only when next touched (thread-safe call)
            _REAPER = SessionReaper(runtime.is_active_session, grace=env.settings_or_defaults().session_grace,
                                    on_release=runtime.uploaded_file_mgr.remove_session_files)
            threading.Thread(target=_sweep_forever, args=(_REAPER,), name="session-reaper",
                             daemon=True).start()
    _REAPER.watch(session_id, session)


__all__ = ["GRACE", "SWEEP_EVERY", "SessionReaper", "release", "trim_heap", "watch_current"]

