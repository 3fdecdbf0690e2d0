"""The environment variables that tune the package and the app, read and checked in one place.

==============================  =========  ===============================================
variable                        default    allowed
==============================  =========  ===============================================
``DROPEDGE_TORCH_THREADS``      1          an integer in 1..:data:`MAX_THREADS`
``DROPEDGE_MAX_JOB_SECONDS``    3600       seconds, a number in (0, 1e7]
``DROPEDGE_SESSION_GRACE``      150        seconds, a number in (0, 1e7]: how long the app
                                           keeps a closed tab's session (its upload, jobs)
                                           before freeing it; below 120 a tab that
                                           reconnects late may find its session emptied
``DROPEDGE_MAX_MEMORY_GB``      8          GiB, a number in (0, 4096]: the memory one run,
                                           one MEN computation or one upload may ask for
                                           (:mod:`dropedge_explorer.memory`) on the CPU
``DROPEDGE_MAX_GPU_MEMORY_GB``  unset      GiB, a number in (0, 4096]: a cap on what one
                                           run may ask of a CUDA device; unset: the
                                           device's free memory is the limit
``DROPEDGE_LOCK_WAIT``          60         seconds, a number in (0, 86400]: how long one
                                           operation of a SQLite store waits for a file
                                           another process holds locked (announced after
                                           2 s) before its one-line error
``DROPEDGE_MAX_WORKERS``        cores − 1  an integer in 1..:data:`MAX_THREADS`: the app's
                                           jobs training at once, each in its own worker
                                           process (:mod:`dropedge_explorer.jobs`); the
                                           rest wait in line. Default: the cores this
                                           process may use, minus one, at least 1
==============================  =========  ===============================================

:func:`settings` raises :class:`EnvError` with one line naming every bad variable; the CLI
prints it as ``error: ...`` (exit 2), the app shows it in an ``st.error`` on every page
and stops. :func:`settings_or_defaults` is for module-level defaults, which must not fail
at import (the caller that starts the program has already reported the bad value).
The directories ``DROPEDGE_DATA`` (raw dataset files) and ``DROPEDGE_CACHE`` (default
``~/.cache/dropedge_explorer``) are read by :func:`directory` through
:func:`dropedge_explorer.locations.parse`, the parser of every store and storage location:
``~`` expanded; a URL, a NUL byte, a name or a path longer than the filesystem allows is
refused here with the other variables. Whether the directory exists, is readable or
writable is checked where it is used, by :mod:`dropedge_core.datasets`.
"""
from __future__ import annotations

import math
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from dropedge_core import files
from dropedge_core.echo import bounded

#: torch's OpenMP pool crashes (segfault) far above the machine's core count; 256 is
#: above any core count this app is run on.
MAX_THREADS = 256
MAX_SECONDS = 1e7  # ~4 months: a job limit, not a bound anyone should reach
MAX_MEMORY_GB = 4096.0
MAX_LOCK_WAIT = 86400.0  # a day: a bound on a wait, not a value anyone should need
#: The number variables, and the directory variables (:func:`directory`).
NUMBERS = ("DROPEDGE_TORCH_THREADS", "DROPEDGE_MAX_JOB_SECONDS",
           "DROPEDGE_SESSION_GRACE", "DROPEDGE_MAX_MEMORY_GB", "DROPEDGE_MAX_GPU_MEMORY_GB",
           "DROPEDGE_LOCK_WAIT", "DROPEDGE_MAX_WORKERS")
DIRECTORIES = files.DIRECTORIES


class EnvError(ValueError):
    """An environment variable holds a value the package cannot use (one line)."""


@dataclass(frozen=True)
class Settings:
    torch_threads: int = 1
    max_job_seconds: float = 3600.0
    session_grace: float = 150.0
    max_memory_gb: float = 8.0
    max_gpu_memory_gb: float | None = None  # None: the CUDA device's free memory
    lock_wait: float = 60.0
    max_workers: int = field(default_factory=lambda: default_workers())


def default_workers() -> int:
    """Jobs that train at once by default: the cores this process may use minus one (the
    server's own), at least 1."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return max(1, cores - 1)


DEFAULTS = Settings()


def parse_threads(value: object, name: str = "--threads") -> int:
    """A thread count in ``1..MAX_THREADS`` from an int or a string of ASCII digits
    (``str.isdigit`` also accepts ``"²"``, which ``int`` refuses)."""
    text = str(value).strip()
    if not re.fullmatch(r"[0-9]{1,6}", text) or not 1 <= int(text) <= MAX_THREADS:
        raise EnvError(f"{name} must be an integer in 1..{MAX_THREADS} (got {bounded(str(value))})")
    return int(text)


def _number(name: str, text: str, high: float) -> float:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and 0 < value <= high):
        raise EnvError(f"{name} must be a number in (0, {high:g}] (got {bounded(text)})")
    return value


def settings(environ: Mapping[str, str] | None = None) -> Settings:
    """The checked settings; unset or empty variables take their defaults.

    Raises:
        EnvError: one line naming each bad variable, its value and what is allowed.
    """
    env = os.environ if environ is None else environ
    values, problems = {}, []
    specs = (("DROPEDGE_TORCH_THREADS", "torch_threads", lambda n, t: parse_threads(t, n)),
             ("DROPEDGE_MAX_JOB_SECONDS", "max_job_seconds", lambda n, t: _number(n, t, MAX_SECONDS)),
             ("DROPEDGE_SESSION_GRACE", "session_grace", lambda n, t: _number(n, t, MAX_SECONDS)),
             ("DROPEDGE_MAX_MEMORY_GB", "max_memory_gb", lambda n, t: _number(n, t, MAX_MEMORY_GB)),
             ("DROPEDGE_MAX_GPU_MEMORY_GB", "max_gpu_memory_gb", lambda n, t: _number(n, t, MAX_MEMORY_GB)),
             ("DROPEDGE_LOCK_WAIT", "lock_wait", lambda n, t: _number(n, t, MAX_LOCK_WAIT)),
             ("DROPEDGE_MAX_WORKERS", "max_workers", lambda n, t: parse_threads(t, n)))
    for name, field_name, parse in specs:
        text = str(env.get(name, "")).strip()
        if not text:
            continue
        try:
            values[field_name] = parse(name, text)
        except EnvError as exc:
            problems.append(str(exc))
    for name in DIRECTORIES:
        try:
            directory(name, env)
        except EnvError as exc:
            problems.append(str(exc))
    if problems:
        raise EnvError("; ".join(problems))
    return Settings(**values)


def directory(name: str, environ: Mapping[str, str] | None = None) -> Path | None:
    """``$name`` (one of :data:`DIRECTORIES`) as a path: :func:`dropedge_core.files.directory`,
    its refusal an :class:`EnvError`."""
    try:
        return files.directory(name, environ)
    except files.PathError as exc:
        raise EnvError(str(exc)) from None


def settings_or_defaults(environ: Mapping[str, str] | None = None) -> Settings:
    """:func:`settings`, with the defaults for any bad variable (never raises)."""
    env = dict(os.environ if environ is None else environ)
    for name in NUMBERS + DIRECTORIES:
        try:
            settings({name: env.get(name, "")})
        except EnvError:
            env.pop(name, None)
    return settings(env)


__all__ = ["DEFAULTS", "DIRECTORIES", "EnvError", "MAX_LOCK_WAIT", "MAX_THREADS", "NUMBERS", "Settings",
           "default_workers", "directory", "parse_threads", "settings", "settings_or_defaults"]
