"""``python -m dropedge_core``: the command line (see :mod:`dropedge_core.cli`)."""
import sys

from dropedge_core.cli import main

if __name__ == "__main__":
    sys.exit(main())
