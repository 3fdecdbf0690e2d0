"""A real Streamlit server for the tests that speak to one over HTTP (browser, security)."""
from __future__ import annotations

import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.helpers import REPO


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("localhost", 0))
        return s.getsockname()[1]


@contextmanager
def streamlit_server(port: int, env: dict, log_path: Path, *extra: str) -> Iterator[str]:
    """``streamlit run app.py`` on ``port`` (its output in ``log_path``); yields the URL once
    ``/_stcore/health`` answers ``ok`` (fails the test after 90 s), stops it after."""
    with open(log_path, "w") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "streamlit", "run", "app.py", "--server.port", str(port),
             "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none", *extra],
            cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT)
        url = f"http://localhost:{port}"
        try:
            deadline = time.time() + 90
            while True:
                try:
                    with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as r:
                        if r.read().strip() == b"ok":
                            break
                except OSError:
                    pass
                if proc.poll() is not None or time.time() > deadline:
                    pytest.fail(f"streamlit did not start: {log_path.read_text()[-2000:]}")
                time.sleep(0.5)
            yield url
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()


def server_pid(port: int) -> int:
    """The pid of the ``streamlit run`` serving ``port`` (:func:`streamlit_server`)."""
    import psutil

    for proc in psutil.process_iter(["cmdline"]):
        argv = proc.info["cmdline"] or []
        if "--server.port" in argv and argv[argv.index("--server.port") + 1:][:1] == [str(port)]:
            return proc.pid
    raise LookupError(f"no streamlit server on port {port}")
