"""``python -m dropedge_core``: the command line (see :mod:`dropedge_core.cli`)."""
import signal
import sys


def _stopped_while_starting(signum: int, frame) -> None:
    """Ctrl-C or SIGTERM before the command runs (importing torch takes seconds): one
    line and ``128 + signum``, not a KeyboardInterrupt traceback or a silent SIGTERM death."""
    name = signal.Signals(signum).name
    sys.stderr.write(f"error: interrupted by {name} while starting; nothing was done\n")
    sys.exit(128 + signum)


if __name__ == "__main__":
    for _signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(_signum, _stopped_while_starting)
    from dropedge_core.cli import main

    sys.exit(main())
