"""Every file location of the package, resolved in one place.

* **Assets** (read-only, shipped inside the package, so an installed wheel has them):
  the paper's tables (``assets/reference``), the bundled runs (``assets/results``), the
  teaching snapshots (``assets/snapshots``) and our MEN table (``assets/men``).
* **The results store**: ``$DROPEDGE_RESULTS`` (a SQLite file path or a server URL), else
  ``results/results.sqlite`` of the checkout (wherever the app or the CLI is started
  from), or of the working directory when the package is installed.
* **The tuning storage**: ``$DROPEDGE_TUNING_STORAGE`` (an Optuna URL or a SQLite file),
  else ``tuning.sqlite`` in that same ``results/`` folder.
* **docs/REPRODUCTION.md**: beside the package in a checkout only (``None`` when installed).

Every file the package writes whole (raw files staged into the cache, downloads, exports)
is written under a temporary name beside it, unique to the process and the call
(:func:`dropedge_core.files.part_path`), then renamed onto its name
(:func:`dropedge_core.files.replaced`): a reader never sees half a file, and two processes
filling one fresh cache never rename each other's copy.
"""
from __future__ import annotations

import os
from importlib import resources
from pathlib import Path

from dropedge_core.files import replaced

from dropedge_explorer import locations

__all__ = [
    "ASSETS", "REFERENCE_DIR", "BUNDLED_RESULTS_DIR", "SNAPSHOT_DIR", "MEN_DIR", "REPO",
    "replaced", "results_store", "tuning_storage", "reproduction_doc",
]

#: The package's data folder (``dropedge_explorer/assets``; package data in a wheel).
ASSETS = Path(str(resources.files("dropedge_explorer") / "assets"))
REFERENCE_DIR = ASSETS / "reference"
BUNDLED_RESULTS_DIR = ASSETS / "results"
SNAPSHOT_DIR = ASSETS / "snapshots"
MEN_DIR = ASSETS / "men"
#: The repository root when the package runs from a checkout (``None`` when installed).
REPO: Path | None = (Path(__file__).resolve().parent.parent
                     if (Path(__file__).resolve().parent.parent / "app.py").is_file() else None)

#: Where the store and the tuning storage live by default.
RESULTS_DIR = (REPO if REPO is not None else Path(".")) / "results"


def asset(*parts: str) -> Path:
    """A file under :data:`ASSETS`: ``asset("reference", "paper_men.csv")``."""
    return ASSETS.joinpath(*parts)


def results_store() -> Path | str:
    """``$DROPEDGE_RESULTS`` (a file path or a server URL), else ``RESULTS_DIR/results.sqlite``:
    a file path (``~`` expanded) or a server URL, read by :func:`dropedge_explorer.locations.parse`.

    Raises:
        LocationError: the variable is not a usable location (one line naming it).
    """
    value = os.environ.get("DROPEDGE_RESULTS", "").strip()
    if not value:
        return RESULTS_DIR / "results.sqlite"
    return locations.parse(value, "DROPEDGE_RESULTS").target


def tuning_storage() -> str:
    """``$DROPEDGE_TUNING_STORAGE``, else ``RESULTS_DIR/tuning.sqlite``: a file path (``~``
    expanded) or a server URL, read by :func:`dropedge_explorer.locations.parse`.

    Raises:
        LocationError: the variable is not a usable location (one line naming it).
    """
    value = os.environ.get("DROPEDGE_TUNING_STORAGE", "").strip()
    if not value:
        return str(RESULTS_DIR / "tuning.sqlite")
    return str(locations.parse(value, "DROPEDGE_TUNING_STORAGE").target)


def reproduction_doc() -> Path | None:
    """``docs/REPRODUCTION.md`` of the checkout, ``None`` when the package is installed."""
    return REPO / "docs" / "REPRODUCTION.md" if REPO is not None else None
