"""The job queue: Live training's CPU is spent in worker processes (not the server's), jobs
take turns by owner, a waiting job knows its place and can leave the line, nothing is
refused; each worker stores its own runs; a bad setting is one line."""
from __future__ import annotations

import os
import sqlite3
import sys
import time
import types
from pathlib import Path

import pytest

from dropedge_explorer import env
from dropedge_explorer.jobs.live import TrainingSession
from dropedge_explorer.jobs.queue import JobQueue
from dropedge_explorer.store import ResultStore
from dropedge_explorer.training import TrainConfig


def _karate(**kw) -> TrainConfig:
    return TrainConfig(**(dict(dataset="karate", num_layers=2, hidden=16, epochs=2, diag_every=0) | kw))


def _until(condition, what: str, limit: float = 300.0) -> None:
    """Wait for a state of the queue (the limit only ends a hung test: a worker process
    imports torch first, slow on a loaded machine)."""
    deadline = time.monotonic() + limit
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.02)


def _niceness(pid: int) -> int:
    """Field 19 of ``/proc/<pid>/stat``: the process's nice value (read by the kernel, not
    by the code under test)."""
    stat = Path(f"/proc/{pid}/stat").read_text()
    return int(stat[stat.rindex(")") + 2:].split()[16])


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")
def test_a_live_run_spends_its_cpu_in_a_niced_worker_process_not_the_servers(cora):
    """Started through the app's own API (a page's :class:`TrainingSession`): the run's CPU
    time shows up as a child process's (``os.times().children_*``, counted by the kernel
    once the worker is reaped), the caller's own CPU stays small, and the worker runs at a
    lower priority than the caller."""
    jobs = JobQueue(max_running=1, store=None)
    live = TrainingSession(queue=lambda: jobs)
    before = os.times()
    job = live.submit([TrainConfig(dataset="cora", split="semi", num_layers=4, hidden=64, epochs=150,
                                   patience=0, diag_every=0)], cora, owner="teacher")
    run = job.runs[0]
    _until(lambda: run.epochs_done >= 1 or run.over, "the run never reached its first epoch")
    assert job.pid is not None and job.pid != os.getpid()
    assert _niceness(job.pid) >= _niceness(os.getpid()) + 5
    assert live.wait(600) and run.status == "finished" and run.epochs_done == 150
    after = os.times()
    own = (after.user - before.user) + (after.system - before.system)
    worker = (after.children_user - before.children_user) + (after.children_system - before.children_system)
    assert worker > 2.0 and own < 0.25 * worker, (own, worker)


def test_a_worker_does_not_run_the_page_script_that_started_it(tmp_path, monkeypatch):
    """Inside ``streamlit run`` the running page script is ``sys.modules["__main__"]``; a
    spawned child imports its parent's main module first, so every worker ran the page
    that started it before its job. Here the "page" writes a file when run: no worker of
    the queue runs it (the job trains as before)."""
    marker, page = tmp_path / "the page ran", tmp_path / "page.py"
    page.write_text(f"open({str(marker)!r}, 'w').write('ran')\n")
    script = types.ModuleType("__main__")
    script.__file__ = str(page)
    monkeypatch.setitem(sys.modules, "__main__", script)
    jobs = JobQueue(max_running=1, store=None)
    job = jobs.submit("train", [_karate()], owner="A")
    assert jobs.wait(job, 300) and job.runs[0].status == "finished", job.runs[0].message
    assert not marker.exists()


def test_jobs_take_turns_by_owner_a_waiting_job_knows_its_place_and_can_leave():
    """One place (N = 1), three owners: A's first job runs; A's second waits behind B's and
    C's first ones (round-robin by owner, not first come), places 1..4 say so, a cancelled
    job leaves the line, every submit is accepted and the jobs start in that order."""
    jobs = JobQueue(max_running=1, store=None)
    a1 = jobs.submit("train", [_karate(epochs=30)], owner="A")
    a2 = jobs.submit("train", [_karate(seed=1)], owner="A")
    b1 = jobs.submit("train", [_karate(seed=2)], owner="B")
    c1 = jobs.submit("train", [_karate(seed=3)], owner="C")
    b2 = jobs.submit("train", [_karate(seed=4)], owner="B")
    assert a1.status == "running" and [j.status for j in (a2, b1, c1, b2)] == ["queued"] * 4
    assert jobs.order() == [b1, c1, a2, b2]
    assert [jobs.place(j) for j in (a1, b1, c1, a2, b2)] == [None, 1, 2, 3, 4]
    jobs.cancel(b2, "its owner's Stop")
    assert b2.status == "cancelled" and b2.runs[0].status == "stopped" and jobs.place(b2) is None
    assert "its owner's Stop" in b2.runs[0].note and jobs.order() == [b1, c1, a2]
    for job in (a1, b1, c1, a2):
        assert jobs.wait(job, 600), job.job_id
    starts = [j.runs[0].started_at for j in (a1, b1, c1, a2)]
    assert starts == sorted(starts) and all(j.runs[0].status == "finished" for j in (a1, b1, c1, a2))
    assert not b2.runs[0].events  # never started


def test_a_job_stops_at_its_wall_time_limit_and_is_not_stored(tmp_path):
    """``DROPEDGE_MAX_JOB_SECONDS`` per run, applied in the worker: the run ends as stopped
    with the limit named, the next config of the job still trains, and only it is stored."""
    path = tmp_path / "results.sqlite"
    jobs = JobQueue(max_running=1, store=str(path), max_seconds=3.0)
    job = jobs.submit("train", [_karate(epochs=20_000, patience=0), _karate(seed=5)], owner="A")
    assert jobs.wait(job, 600)
    long, short = job.runs
    assert long.status == "stopped" and "wall-time limit of 3 s" in long.note and long.stored_key is None
    assert short.status == "finished" and short.stored_key
    assert len(ResultStore(path)) == 1


def test_a_worker_meeting_a_locked_store_stores_its_run_once_the_lock_goes(tmp_path):
    """Another program takes the SQLite store (``BEGIN EXCLUSIVE``) while a run trains and
    holds it past the run's end: the worker waits and retries as ``train --store`` does,
    and the run is stored once the lock goes; nothing in the server waits for it."""
    path = tmp_path / "results.sqlite"
    jobs = JobQueue(max_running=1, store=str(path))
    job = jobs.submit("train", [_karate(epochs=3000, patience=0)], owner="A")
    run = job.runs[0]
    _until(lambda: run.epochs_done >= 1 or run.over, "the run never started")
    holder = sqlite3.connect(path, isolation_level=None, timeout=30)
    holder.execute("BEGIN EXCLUSIVE")
    assert not run.over, "the run ended before the lock was taken"
    _until(lambda: run.end is not None or run.over, "the run did not end")
    assert run.stored_key is None and not job.over  # the lock is held: the worker cannot be done
    holder.execute("COMMIT")
    holder.close()
    assert jobs.wait(job, 300) and run.status == "finished" and run.stored_key, run.note
    assert ResultStore(path).get(run.config)["test_acc"] == run.end["test_acc"]


def test_the_number_of_workers_is_checked():
    """``DROPEDGE_MAX_WORKERS``: an integer from 1, one line otherwise; default cores - 1."""
    assert env.settings({"DROPEDGE_MAX_WORKERS": "3"}).max_workers == 3
    cores = len(os.sched_getaffinity(0))
    assert env.settings({}).max_workers == max(1, cores - 1)
    for bad in ("0", "-1", "two", "1.5"):
        with pytest.raises(env.EnvError, match=f"DROPEDGE_MAX_WORKERS must be an integer in 1..256 "
                                               f"\\(got '{bad}'\\)"):
            env.settings({"DROPEDGE_MAX_WORKERS": bad})
    with pytest.raises(ValueError, match="max_running must be an integer >= 1"):
        JobQueue(max_running=0)
