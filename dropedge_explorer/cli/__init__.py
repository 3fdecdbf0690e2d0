"""Command line: ``python -m dropedge_core {datasets,train,men,sweep,tune,search,reproduce,export} ...``.

Every subcommand has ``--help``; ``--json`` prints machine-readable output to stdout;
progress bars go to stderr (only when it is a terminal, or never with ``--no-progress``).
Bad input exits with code 2 and one line ``error: ...`` naming the bad value — never a
traceback.

Examples::

    python -m dropedge_core datasets
    python -m dropedge_core train --dataset cora --split semi --backbone gcn --layers 2 \\
        --sampler nodrop --seeds 0 1 2 --json
    python -m dropedge_core train --dataset cora --backbone gcn --preset paper --layers 8 \\
        --sampler dropedge++
    python -m dropedge_core men --dataset cora --sampler lid li --layers 4 8 16 \\
        --p-min 0.05 --p-max 1.0 --runs 10
    python -m dropedge_core sweep --dataset cora --backbones gcn resgcn \\
        --samplers nodrop dropedge dropedge++ --layers 2 4 8 --seeds 0 1 2 \\
        --store results/results.sqlite      # or postgresql://me@db.lab/dropedge_results: start
                                             # it on several machines, they split the grid
    python -m dropedge_core tune --dataset csbm --backbone gcn --layers 8 --trials 20 \\
        --study demo --storage sqlite:///results/tuning.sqlite
    python -m dropedge_core reproduce --table gcn-semi-citeseer --seeds 10 --dry-run
    python -m dropedge_core train --edges my_edges.csv --features my_features.csv \\
        --labels my_labels.csv --layers 4 --sampler dropedge++

Your own graph: ``--edges PATH [--features PATH] [--labels PATH]`` on ``men``, ``train``
and ``tune`` instead of ``--dataset`` (:mod:`dropedge_explorer.data.csv_graph`: CSV text, read as
data only, never unpickled or evaluated; repairs are printed to stderr as ``note: ...``
lines, an unusable file is exit 2 with one ``error: ...`` line). Its split is 20/30
labelled nodes per class from seed 0; training needs ``--labels``.

The public surface is :func:`main` (and the command line itself); the modules are
internals (``_``-prefixed, Optuna's convention): ``_parser`` (the arguments),
``_commands`` (one function per subcommand), ``_common`` (what they share),
``_reproduce`` and ``_export``.
"""
from __future__ import annotations

import argparse
import errno
import os
import signal
import stat
import sys
from collections.abc import Sequence

import torch

from dropedge_explorer import _sqlite_locks as sqlite_locks
from dropedge_explorer import env
from dropedge_explorer.cli._commands import (
    cmd_datasets,
    cmd_men,
    cmd_search,
    cmd_sweep,
    cmd_train,
    cmd_tune,
    sweep_grid,
)
from dropedge_explorer.cli._common import CLIError, make_config
from dropedge_explorer.cli._export import cmd_export
from dropedge_explorer.cli._parser import build_parser
from dropedge_explorer.cli._reproduce import cmd_reproduce
from dropedge_explorer.studies._stopping import Interrupted
from dropedge_explorer.training import ConfigError

COMMANDS = {"datasets": cmd_datasets, "train": cmd_train, "men": cmd_men, "sweep": cmd_sweep,
            "tune": cmd_tune, "search": cmd_search, "reproduce": cmd_reproduce,
            "export": cmd_export}


def _set_threads(args: argparse.Namespace) -> None:
    """``--threads``, else ``$DROPEDGE_TORCH_THREADS`` (checked with every other variable of
    :mod:`dropedge_explorer.env`, once, here), bounded by :data:`env.MAX_THREADS`."""
    settings = env.settings()
    threads = getattr(args, "threads", None)
    threads = settings.torch_threads if threads is None else env.parse_threads(threads)
    torch.set_num_threads(threads)


def _terminated(signum: int, frame) -> None:
    """SIGTERM outside ``tune``/``search``'s own handling: :class:`Interrupted`, so that
    ``finally`` blocks (a sweep's claims) run and the line below is printed (exit 143)."""
    raise Interrupted(signum)


def _escape_what_cannot_be_shown() -> None:
    """Characters the output's encoding lacks (``PYTHONIOENCODING=ascii``, a C locale) are
    written as ``\\xb1`` escapes: with the default ``strict`` on stdout, a ``±`` raised a
    ``UnicodeEncodeError`` (a ``ValueError``) whose line replaced the real output or message."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.reconfigure(errors="backslashreplace")
        except (AttributeError, ValueError, OSError):  # a replaced stream (a test's capture)
            pass


def _no_room_line(exc: OSError) -> str:
    """A write that found no room as one line: the file (or where standard output goes) and
    why (:func:`~dropedge_explorer._sqlite_locks.space_problem`: a full disk or a size limit)."""
    if exc.filename is not None:
        target, name = str(exc.filename), repr(str(exc.filename))
    else:  # a file object's write without a name: the output (the CLI's only such file)
        try:
            target = os.readlink("/proc/self/fd/1")
        except OSError:
            target = "."
        name = f"the output (standard output: {target!r})"
    why = sqlite_locks.space_problem(os.path.abspath(target)) or exc.strerror or "no room"
    return f"cannot write {name}: {why}; free space or raise the limit"


def _check_output_whole() -> None:
    """Raise ``EFBIG`` when standard output is a file that stopped at this process's
    file-size limit (``ulimit -f``): the write that reached the limit was short, and
    CPython's buffered flush takes a short write as done, so the rest would be lost in
    silence (exit 0, a cut file)."""
    try:
        import resource

        limit = resource.getrlimit(resource.RLIMIT_FSIZE)[0]
        size = os.fstat(sys.stdout.fileno())
    except (ImportError, AttributeError, ValueError, OSError):  # no resource module; a test's capture
        return
    if limit != resource.RLIM_INFINITY and stat.S_ISREG(size.st_mode) and size.st_size >= limit:
        raise OSError(errno.EFBIG, "File too large")


def _silence_stdout() -> None:
    """After the output could not be written: what is still buffered goes nowhere, so that
    the interpreter's last flush does not print a second error (and exit 120)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (AttributeError, ValueError, OSError):  # a replaced stream (a test's capture)
        pass


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the exit code (0 ok, 2 bad input, 130 interrupted; 143 for
    SIGTERM during ``tune``/``search``)."""
    _escape_what_cannot_be_shown()
    if argv is None:  # a process of its own (``python -m``, the ``dropedge`` script), not a caller's
        signal.signal(signal.SIGINT, signal.default_int_handler)  # KeyboardInterrupt: one line below
        signal.signal(signal.SIGTERM, _terminated)
    args = build_parser().parse_args(argv)
    try:
        if args.command != "datasets":
            _set_threads(args)
        code = COMMANDS[args.command](args)
        sys.stdout.flush()  # here, not at exit: an output that cannot be written is one line below
        _check_output_whole()
        return code
    except BrokenPipeError:  # the output's reader left (`| head`): nothing to tell it, no traceback
        _silence_stdout()
        return 141  # as a process that SIGPIPE ended (128 + 13)
    except OSError as exc:
        if exc.errno not in sqlite_locks.NO_ROOM:
            raise
        line = _no_room_line(exc)  # before the output is sent to /dev/null: it names where it went
        _silence_stdout()
        sys.stderr.write(f"error: {line}\n")
        return 2
    except KeyboardInterrupt:
        sys.stderr.write("error: interrupted\n")
        return 130
    except Interrupted as exc:  # tune/search: the running trial or run was left unfinished, not counted
        sys.stderr.write(f"error: {exc}; the running trial or run was left unfinished and not counted: run "
                         f"the same command again to resume\n")
        return exc.exit_code
    except ValueError as exc:  # DatasetError, SamplerError, NormalizationError, ConfigError, ...
        message = " ".join(str(exc).split()) or type(exc).__name__
        sys.stderr.write(f"error: {message}\n")
        return 2


__all__ = ["CLIError", "ConfigError", "build_parser", "main", "make_config", "sweep_grid"]
