"""``python -m dropedge_core``: the command line, which lives in the explorer
(:mod:`dropedge_explorer.cli`). The one place where the library reaches up: a library
installed without the explorer says so in one line."""
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
    try:
        from dropedge_explorer.cli import main
    except ModuleNotFoundError as exc:
        if exc.name != "dropedge_explorer":
            raise
        sys.stderr.write("error: the command line is the explorer's: pip install dropedge-explorer "
                         "(this is the dropedge_core library alone)\n")
        sys.exit(2)
    sys.exit(main())
