"""``python -m dropedge_explorer``: the command line (:mod:`dropedge_explorer.cli`), as
``python -m dropedge_core`` and ``dropedge``."""
import runpy

if __name__ == "__main__":
    runpy.run_module("dropedge_core", run_name="__main__")
