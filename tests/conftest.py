"""Shared fixtures. Real data come from ``DROPEDGE_DATA`` (default ``../shared/data``
beside the repository); tests that need Cora/CiteSeer skip when it is absent."""
from __future__ import annotations

import os

import pytest
import torch

from tests.helpers import REPO

pytest_plugins = ["pytester"]  # tests/test_ci_skips.py runs this conftest's rules on a made-up suite

_default_data = REPO.parent / "shared" / "data"
if not os.environ.get("DROPEDGE_DATA") and _default_data.is_dir():
    os.environ["DROPEDGE_DATA"] = str(_default_data)


#: At most this many pytest-xdist workers (``-n auto``): each holds torch, and the browser
#: tests start a Streamlit server and Chromium per file; one torch thread each.
MAX_WORKERS = 4


class _XdistWorkers:
    """xdist's ``-n auto`` hook, in a plugin object registered only where xdist is loaded: a
    conftest function of that name is an unknown hook under ``-p no:xdist`` (INTERNALERROR)."""

    @staticmethod
    def pytest_xdist_auto_num_workers(config):
        """``-n auto``: a worker per core this process may use, at most :data:`MAX_WORKERS` (2
        on this project's machine)."""
        cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
        return max(1, min(MAX_WORKERS, cores))


def pytest_addhooks(pluginmanager):
    """Register :class:`_XdistWorkers` when xdist (which declares its hook) is loaded; this
    runs as the conftest is registered, before xdist reads ``-n auto``."""
    if pluginmanager.has_plugin("xdist"):
        pluginmanager.register(_XdistWorkers(), "dropedge-xdist-workers")


@pytest.fixture(autouse=True, scope="session")
def one_thread():
    """torch's OpenMP pool stalls on shared cores (a 2-core machine running a Streamlit
    server or a second process); one intra-op thread keeps every test fast, as the app
    and the CLI do by default."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(autouse=True, scope="session")
def results_store_outside_the_repo(tmp_path_factory):
    """Live training runs are put into the results store: tests use a temporary one, never
    the checkout's ``results/`` (a test that needs another sets ``DROPEDGE_RESULTS`` itself)."""
    before = os.environ.get("DROPEDGE_RESULTS")
    os.environ["DROPEDGE_RESULTS"] = str(tmp_path_factory.mktemp("results") / "results.sqlite")
    yield
    if before is None:
        os.environ.pop("DROPEDGE_RESULTS", None)
    else:
        os.environ["DROPEDGE_RESULTS"] = before


def _have(name: str) -> bool:
    from dropedge_core import datasets

    return datasets.availability(name) != "download"


@pytest.fixture(scope="session")
def cora():
    if not _have("cora"):
        pytest.skip("Cora not available offline (set DROPEDGE_DATA)")
    from dropedge_core import datasets

    return datasets.load("cora", split="semi")


@pytest.fixture(scope="session")
def citeseer():
    if not _have("citeseer"):
        pytest.skip("CiteSeer not available offline (set DROPEDGE_DATA)")
    from dropedge_core import datasets

    return datasets.load("citeseer", split="semi")


@pytest.fixture(scope="session")
def karate():
    from dropedge_core import datasets

    return datasets.load("karate")


@pytest.fixture(scope="session")
def csbm():
    from dropedge_core import datasets

    return datasets.load("csbm")






# ---- CI says what it did not test ----------------------------------------------------------
#: Under CI=true a skip is a failure, except in the tiers that need what CI may not have: a
#: GPU, minutes per test, a kernel that lets a test mount a filesystem in its own namespace.
SKIP_ALLOWED_MARKERS = ("cuda", "deep", "namespaces")


def _strict_skips() -> bool:
    return os.environ.get("CI", "").strip().lower() == "true"


def _skip_reason(report) -> str:
    longrepr = report.longrepr
    return str(longrepr[2] if isinstance(longrepr, tuple) else longrepr).removeprefix("Skipped: ")


#: How a skip turned into a failure begins its report (read back from the reports, so the
#: count holds when the tests run in pytest-xdist's workers).
_CI_SKIP = "skipped under CI=true (only the {tiers} tier may skip): "


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    """Under ``CI=true`` a skipped test outside the cuda tier fails, with its reason: a
    missing chromium, PostgreSQL server or data set must not turn CI green untested."""
    report = yield
    if (report.skipped and _strict_skips() and not hasattr(report, "wasxfail")
            and not any(item.get_closest_marker(m) for m in SKIP_ALLOWED_MARKERS)):
        report.outcome = "failed"
        report.longrepr = _CI_SKIP.format(tiers="/".join(SKIP_ALLOWED_MARKERS)) + _skip_reason(report)
    return report


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    """The count of skips by reason (and, under CI=true, of skips turned into failures)."""
    reasons: dict[str, int] = {}
    for report in terminalreporter.stats.get("skipped", []):
        reason = _skip_reason(report)
        reasons[reason] = reasons.get(reason, 0) + 1
    head = _CI_SKIP.format(tiers="/".join(SKIP_ALLOWED_MARKERS))
    failed = terminalreporter.stats.get("failed", []) + terminalreporter.stats.get("error", [])  # in setup
    forbidden = [str(r.longrepr).removeprefix(head) for r in failed if str(r.longrepr).startswith(head)]
    if not reasons and not forbidden:
        return
    terminalreporter.section("skips by reason")
    for reason, count in sorted(reasons.items(), key=lambda kv: -kv[1]):
        terminalreporter.line(f"{count:4d} skipped: {reason}")
    for reason in sorted(set(forbidden)):
        terminalreporter.line(f"{forbidden.count(reason):4d} FAILED (a skip under CI=true): {reason}")
