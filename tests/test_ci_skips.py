"""The suite's own rule for CI (tests/conftest.py): under ``CI=true`` a skip outside the
cuda tier fails with its reason, and every run counts its skips by reason."""
from __future__ import annotations

import pytest

from tests.helpers import REPO

SKIPPING = """
import pytest

def test_needs_chromium():
    pytest.skip("chromium not found")

@pytest.mark.cuda
def test_needs_a_gpu():
    pytest.skip("needs a CUDA GPU")

@pytest.mark.skipif(True, reason="no PostgreSQL server binaries")
def test_needs_postgres():
    pass

def test_runs():
    assert True
"""


@pytest.fixture
def suite(pytester):
    pytester.makeconftest((REPO / "tests" / "conftest.py").read_text(encoding="utf-8"))
    pytester.makepyfile(test_skipping=SKIPPING)
    return pytester


def test_under_ci_a_skip_outside_the_cuda_tier_fails(suite, monkeypatch):
    monkeypatch.setenv("CI", "true")
    result = suite.runpytest("-p", "no:cacheprovider", "-p", "no:randomly")
    result.assert_outcomes(passed=1, failed=1, errors=1, skipped=1)  # a skipif fails in setup
    result.stdout.fnmatch_lines(["*skips by reason*", "*1 skipped: needs a CUDA GPU*",
                                 "*1 FAILED (a skip under CI=true): chromium not found*",
                                 "*1 FAILED (a skip under CI=true): no PostgreSQL server binaries*"])


def test_outside_ci_skips_are_counted_by_reason(suite, monkeypatch):
    monkeypatch.delenv("CI", raising=False)
    result = suite.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, skipped=3)
    result.stdout.fnmatch_lines(["*skips by reason*", "*1 skipped: chromium not found*"])


def test_the_count_holds_when_xdist_workers_run_the_tests(suite, monkeypatch):
    """The README's command runs the suite in pytest-xdist's workers: the skips turned into
    failures there are counted in the summary all the same."""
    monkeypatch.setenv("CI", "true")
    result = suite.runpytest("-p", "no:cacheprovider", "-p", "no:benchmark", "-n", "2")
    result.assert_outcomes(passed=1, failed=1, errors=1, skipped=1)
    result.stdout.fnmatch_lines(["*skips by reason*", "*1 skipped: needs a CUDA GPU*",
                                 "*1 FAILED (a skip under CI=true): chromium not found*",
                                 "*1 FAILED (a skip under CI=true): no PostgreSQL server binaries*"])


def test_the_conftest_loads_without_xdist(suite, monkeypatch):
    """``-p no:xdist`` (one process): the conftest's ``-n auto`` hook is xdist's, so it is
    registered only when xdist is loaded (was: ``INTERNALERROR ... unknown hook
    'pytest_xdist_auto_num_workers'`` before any test ran)."""
    monkeypatch.delenv("CI", raising=False)
    result = suite.runpytest("-p", "no:cacheprovider", "-p", "no:xdist")
    assert "INTERNALERROR" not in result.stdout.str() + result.stderr.str()
    result.assert_outcomes(passed=1, skipped=3)


def test_auto_workers_are_bounded_by_the_conftest(suite, monkeypatch):
    """With xdist loaded, ``-n auto`` still asks the conftest: one worker per usable core, at
    most MAX_WORKERS = 4 (xdist's own answer would be all 8 cores)."""
    import os

    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(8)), raising=False)
    config = suite.parseconfigure("-p", "no:cacheprovider")
    assert config.hook.pytest_xdist_auto_num_workers(config=config) == 4


def test_readme_names_a_one_process_command_that_works():
    """README's one-process flag is one the project's addopts accept (``-p no:xdist`` alone
    is not: addopts passes xdist's ``-n auto``)."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert "`-n 0` for one process" in readme
