"""Sweeps and tuning studies as jobs of the queue: trained in a worker process, each run
claimed before it is trained (never redone, a run another worker holds waited for), a
failing run reported and the sweep goes on, a run cut short never stored, a waiting job
told its place, the wall-time limit per job; a study's trials, its Stop."""
from __future__ import annotations

import time

import pytest

from dropedge_explorer.jobs.handles import SweepJob, TuningJob
from dropedge_explorer.jobs.queue import Job, JobQueue
from dropedge_explorer.store import ResultStore, run_key
from dropedge_explorer.studies import depth as depth_study
from dropedge_explorer.studies.tuned import load_study, train_request
from dropedge_explorer.training import TrainConfig
from tests.helpers.runs import fake_result, result_of

LIMIT = 300.0  # a worker imports torch first: slow on a loaded machine; only ends a hung test


def _until(condition, what: str, limit: float = LIMIT) -> None:
    deadline = time.monotonic() + limit
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.02)


def _karate(**kw) -> TrainConfig:
    return TrainConfig(**(dict(dataset="karate", num_layers=2, sampler="nodrop") | kw))


def _queue(tmp_path, **kw) -> tuple[JobQueue, ResultStore]:
    path = tmp_path / "r.sqlite"
    return JobQueue(max_running=1, store=str(path), **kw), ResultStore(path)


def test_a_sweep_trains_in_a_worker_skips_stored_runs_and_goes_on_after_a_failure(tmp_path, monkeypatch):
    """Four karate runs (one stored meanwhile: skipped) and a Cora run whose data is not on
    this machine (it fails in the worker; the sweep goes on): three trained and stored by
    the worker, the counts and the words say so."""
    monkeypatch.setenv("DROPEDGE_DATA", str(tmp_path / "no-data-here"))  # the worker inherits it
    jobs, store = _queue(tmp_path)
    configs = depth_study.depth_configs("karate", None, ["gcn"], [2, 4], ["nodrop", "dropedge++"], seeds=1,
                                        epochs=3)
    cora = TrainConfig(dataset="cora", split="semi", num_layers=2, epochs=3, diag_every=0)
    store.put(result_of(configs[1]))  # stored meanwhile (another session, a CLI sweep)
    job = SweepJob(configs[:2] + [cora] + configs[2:], jobs).start(owner="A")
    assert job.join(LIMIT) and job.error is None, job.status
    assert (job.stored, job.skipped, len(job.failures), job.total) == (3, 1, 1, 5)
    assert job.failures[0][0].dataset == "cora" and job.failures[0][1].startswith("DatasetUnavailable: ")
    assert sorted(job.stored_keys) == sorted(run_key(c) for c in (configs[0], configs[2], configs[3]))
    assert all(store.has(c) for c in configs) and not store.has(cora) and store.claims() == []
    assert job.progress == 1.0 and job.status.startswith("finished · 3 of 5 runs trained and stored")
    assert "1 found in the store meanwhile" in job.status and "1 failed (" in job.status
    assert job.job.pid is not None and store.get(configs[0])["epochs_run"] == 3


def test_a_stopped_sweep_stores_no_partial_run_and_a_waiting_one_knows_its_place(tmp_path):
    """One place: a sweep trains, a second owner's waits (place 1); Stop cuts the first
    sweep's run short: nothing stored, no claim left, the next run not started; the
    waiting one then runs."""
    jobs, store = _queue(tmp_path)
    configs = [c.replace(patience=0) for c in depth_study.depth_configs(
        "karate", None, ["gcn"], [2, 4], ["nodrop"], seeds=1, epochs=100_000)]  # no early stop
    job = SweepJob(configs, jobs).start(owner="A")
    later = SweepJob(depth_study.depth_configs("karate", None, ["gcn"], [2], ["nodrop"], seeds=1, epochs=3),
                     jobs).start(owner="B")
    assert later.place() == 1
    assert later.status.startswith("waiting for its turn: place 1 in the server's line")
    _until(lambda: job.epoch >= 3, "the sweep never reached its third epoch")
    assert job.current == configs[0] and 0 < job.progress < 0.5
    assert "run 1 of 2: NoDrop · GCN L=2 · seed 0, epoch" in job.status
    job.stop()
    assert job.join(LIMIT) and job.stopped and job.status.startswith("stopped · 0 of 2")
    assert later.join(LIMIT) and later.stored == 1
    assert len(store) == 1 and not store.has(configs[0]) and store.claims() == []


def test_a_sweep_waits_for_a_run_another_worker_trains_then_skips_it(tmp_path):
    """A live CLI worker holds seed 1: the sweep trains seeds 0 and 2, says it waits for
    the held one, and skips it once the other worker stored it."""
    jobs, store = _queue(tmp_path)
    configs = [_karate(epochs=3, seed=s) for s in range(3)]
    store.claim(configs[1], "cli-worker", lease=60)
    job = SweepJob(configs, jobs, lease=4).start(owner="A")
    _until(lambda: "waiting for 1 run(s)" in job.status, "the sweep never waited for the held run")
    assert "waiting for 1 run(s) that other workers are training" in job.status and job.stored == 2
    store.put(fake_result(1, num_layers=2, sampler="nodrop", epochs=3))  # the CLI worker stores it
    assert job.join(LIMIT)
    assert (job.stored, job.skipped) == (2, 1) and sorted(job.stored_keys) == sorted(
        run_key(c) for c in (configs[0], configs[2]))
    assert job.status.startswith("finished · 2 of 3 runs") and len(store) == 3


def test_a_sweep_and_a_study_end_at_the_job_wall_time_limit(tmp_path):
    """``max_seconds`` is the whole sweep's (study's) limit: the run cut short is not
    stored, the words name the limit and its variable."""
    jobs, store = _queue(tmp_path, max_seconds=4.0)
    configs = [c.replace(patience=0) for c in depth_study.depth_configs(
        "karate", None, ["gcn"], [2], ["nodrop"], seeds=1, epochs=100_000)]  # no early stop
    job = SweepJob(configs, jobs).start(owner="A")
    assert job.join(LIMIT) and len(store) == 0 and job.stopped
    assert "the wall-time limit of 4 s per job (DROPEDGE_MAX_JOB_SECONDS)" in job.status
    base = TrainConfig(dataset="karate", num_layers=2, hidden=8, epochs=100_000, patience=0, diag_every=0)
    study = TuningJob(base, 5, "limit", f"sqlite:///{tmp_path / 't.sqlite'}", queue=jobs).start(owner="A")
    assert study.join(LIMIT) and study.finished <= 1 and "wall-time limit of 4 s" in study.status


def test_a_tuning_job_runs_its_trials_in_a_worker_and_stops(tmp_path, karate):
    storage = f"sqlite:///{tmp_path / 'tune.sqlite'}"
    jobs = JobQueue(max_running=1, store=None)
    base = TrainConfig(dataset="karate", num_layers=2, hidden=8, epochs=5, diag_every=0)
    job = TuningJob(base, 3, "t", storage, search="random", seed=0, graph=karate, queue=jobs).start(owner="A")
    assert job.join(LIMIT) and job.error is None and job.job.pid is not None
    assert job.finished == 3 and job.status.startswith("finished 3 trials")
    frame = job.frame()
    assert len(frame) == 3 and set(frame["state"]) == {"COMPLETE"}
    assert frame.loc[0, "p_min"] == pytest.approx(base.p_min)  # the base point first
    best = job.best()
    request = train_request(best, base, "t")
    assert request["p_min"] == best["p_min"] and request["p_max"] >= request["p_min"]
    assert request["dataset"] == "karate" and "trial #" in request["source"]
    assert load_study("t", storage) is not None and load_study("nope", storage) is None
    # stop: the study ends after the running trial, itself cut short
    long = base.replace(epochs=100_000)
    job = TuningJob(long, 50, "t2", storage, graph=karate, queue=jobs).start(owner="A")
    _until(lambda: job.study.get_trials(deepcopy=False), "the study never started a trial")
    job.stop()  # mid-trial
    assert job.join(LIMIT) and job.finished <= 1 and job.status.startswith("stopped after")


def test_a_study_the_checks_refuse_is_never_queued(tmp_path):
    """``tune``'s checks run in the caller's process: a bad trial count is refused at once
    and nothing reaches the queue."""
    jobs = JobQueue(max_running=1, store=None)
    with pytest.raises(Exception, match="trials"):
        TuningJob(TrainConfig(dataset="karate"), 0, "x", f"sqlite:///{tmp_path / 't.sqlite'}", queue=jobs)
    assert jobs.order() == [] and jobs.running() == []


def test_a_sweep_says_which_runs_train_in_one_batch():
    """The words of a running sweep, from a worker's snapshot (set by hand: a real batch of
    karate seeds ends between two snapshots)."""
    configs = [_karate(epochs=9, seed=s) for s in range(3)]
    handle = SweepJob(configs, JobQueue(max_running=1, store=None))
    handle.job = Job("j", "sweep", "A", [], status="running", progress={
        "total": 3, "skipped": 0, "waiting": 0, "stored_keys": [], "failures": [], "current": configs[0],
        "batch": [0, 1], "epoch": 3})
    assert handle.status == "runs 1–2 of 3 in one batch: NoDrop · GCN L=2 · seeds 0, 1, epoch 3 of 9 · " \
                            "0 of 3 runs trained and stored"
    assert handle.progress == pytest.approx(2 * 3 / 9 / 3)
