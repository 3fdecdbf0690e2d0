"""A page's Live training session in the server's queue, its runs' words, and the
server-wide registry of jobs (sweeps and studies: ``tests/jobs/test_handles.py``)."""
from __future__ import annotations

import time

import pytest
import torch

from dropedge_explorer.jobs.live import TrainingSession, device_label
from dropedge_explorer.jobs.queue import JobQueue
from dropedge_explorer.jobs.records import RunRecord
from dropedge_explorer.training import TrainConfig


def _until(condition, what: str, limit: float = 300.0) -> None:
    """Wait for a state (the limit only ends a hung test)."""
    deadline = time.monotonic() + limit
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.02)


class FakeClock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


def _karate(**kw) -> TrainConfig:
    values = dict(dataset="karate", num_layers=3, hidden=16, epochs=8, diag_every=4)
    return TrainConfig(**(values | kw))


def test_device_label(monkeypatch):
    cuda = "CPU" if torch.cuda.is_available() else "CPU (no CUDA GPU found)"
    assert device_label("cpu") == cuda
    if not torch.cuda.is_available():
        assert device_label("auto") == "CPU (no CUDA GPU found)"
    # a CUDA device, as if one were there: the label names it
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda device=None: "NVIDIA H100 80GB HBM3")
    assert device_label("cpu") == "CPU"
    assert device_label("cuda") == "CUDA · NVIDIA H100 80GB HBM3"
    assert device_label("auto") == "CUDA · NVIDIA H100 80GB HBM3"


def test_a_run_reports_its_pace_and_the_gpu_name():
    events = [{"type": "start", "device": "cuda:0", "device_name": "NVIDIA H200"}]
    events += [{"type": "epoch", "epoch": i, "epoch_time": t} for i, t in enumerate([0.5, 0.1, 0.2], 1)]
    record = RunRecord(1, _karate(), "#1", events=events, status="running")
    assert record.epoch_time == 0.2 and record.device_name == "cuda:0 · NVIDIA H200"
    assert record.message == "epoch 3 of 8 · 0.200 s/epoch"
    row = record.row()
    assert row["epoch_s"] == 0.2 and row["device"] == "cuda:0 · NVIDIA H200"
    start = {"type": "start", "device": "cpu", "device_name": "CPU"}
    cpu = RunRecord(2, _karate(), "#2", events=[start])
    assert cpu.device_name == "cpu" and cpu.epoch_time is None and cpu.row()["epoch_s"] is None


def test_session_figures_are_rebuilt_only_when_their_version_changes():
    session = TrainingSession()
    built = []

    def build():
        built.append(1)
        return object()

    first = session.figure("curves", (("#1", 3),), build)
    assert session.figure("curves", (("#1", 3),), build) is first and len(built) == 1
    assert session.figure("curves", (("#1", 4),), build) is not first and len(built) == 2
    session.figure("men", (("#1", 4),), build)
    assert len(built) == 3  # one cache entry per figure name


def test_a_live_training_run_is_found_by_the_depth_study(tmp_path, monkeypatch):
    """A Live training run that ends with a result is put into the results store under the
    key the Depth study asks for (diag_every is not part of it), so the study finds it and
    has nothing to retrain; a stopped run is not stored."""
    from dropedge_explorer.data import reference
    from dropedge_explorer.store import ResultStore, run_key
    from dropedge_explorer.studies import depth
    from dropedge_explorer.studies.depth_view import depth_view
    from dropedge_explorer.studies.run_tables import cached_runs, empty_runs, store_runs

    monkeypatch.setenv("DROPEDGE_RESULTS", str(tmp_path / "results.sqlite"))
    study = dict(dataset="karate", split=None, backbones=["gcn"], depths=[2], samplers=["dropedge++"],
                 seeds=1, epochs=12, mode="depth recipe", p_min=0.3, p_max=0.8, kernel="linear",
                 directed=False)
    wanted = depth.depth_configs(study["dataset"], None, ["gcn"], [2], ["dropedge++"], 1, 12)[0]
    jobs = JobQueue(max_running=1, store=str(tmp_path / "results.sqlite"))
    session = TrainingSession(queue=lambda: jobs)
    # the Live training page's diagnostics
    record = session.submit([wanted.replace(diag_every=5)], owner="me").runs[0]
    assert session.wait(300)
    assert record.status in ("finished", "early_stop")
    assert record.stored_key == run_key(wanted)
    store = ResultStore(tmp_path / "results.sqlite")
    cached = cached_runs(store_runs(store), empty_runs())
    view = depth_view(cached=cached, paper=reference.paper_accuracy_by_depth(),
                      **(study | {"split": wanted.split}))
    assert view.missing == [] and view.counts == {"store": 1, "bundled": 0}
    assert view.runs["test_acc"].iloc[0] == pytest.approx(store.get(wanted)["test_acc"])
    assert view.table["status"].tolist() == ["measured"]

    stopped = session.submit([wanted.replace(seed=1, epochs=100_000, patience=0)], owner="me").runs[0]
    _until(lambda: stopped.epochs_done >= 1, "the long run never started", limit=300)
    session.stop()
    assert session.wait(300) and stopped.status == "stopped" and stopped.stored_key is None
    assert len(store) == 1


# -- jobs that outlive the tab: the registry -------------------------


class Switch:
    """A job whose activity the test sets."""

    def __init__(self, active: bool = True):
        self.active = active


def test_registry_finds_jobs_by_id_and_bounds_what_it_keeps():
    from dropedge_explorer.jobs.registry import JobRegistry

    clock = FakeClock()
    reg = JobRegistry(keep_finished=60, max_finished=2, clock=clock)
    a, b = Switch(), Switch()
    ida, idb = reg.register(a, "training"), reg.register(b, "sweep")
    assert ida != idb and reg.register(a, "training") == ida  # one id per job
    assert reg.get(ida) is a and reg.get(ida, "training") is a and reg.get(ida, "sweep") is None
    assert reg.get("unknown") is None
    a.active = False  # a finished: kept, findable
    clock.now += 30
    c = Switch()
    idc = reg.register(c, "training")
    assert reg.get(ida) is a and [e.job_id for e in reg.entries("training")] == [ida, idc]
    clock.now += 61  # a seen finished 61 s ago: expired
    assert reg.get(ida) is None and len(reg) == 2
    # at most max_finished finished jobs: the earliest finished go first
    b.active, c.active = False, False
    clock.now += 1
    d, e = Switch(False), Switch(False)
    reg.register(d, "training")
    clock.now += 1
    reg.register(e, "training")
    clock.now += 1
    kept = {x.job_id for x in reg.entries()}
    assert len(kept) == 2 and reg.get(idb) is None and reg.get(idc) is None
    # a finished job registered again keeps its id
    assert reg.register(e, "training") == reg.id_of(e)
    # never refused for being one too many: every job waits its turn in the server's queue
    many = [Switch() for _ in range(20)]
    assert len({reg.register(x, "tuning") for x in many}) == 20 and len(reg.entries("tuning")) == 20


def test_each_job_has_its_own_owner_token_and_an_id_is_not_one():
    """A job's owner token: 128 random bits, one per job, kept when the same job is
    registered again, out of the entry's repr; neither its id nor another job's token is
    accepted."""
    from dropedge_explorer.jobs.registry import JobRegistry

    reg = JobRegistry()
    a, b = Switch(), Switch()
    ida, idb = reg.register(a, "training"), reg.register(b, "sweep")
    ta, tb = reg.owner_token(ida), reg.owner_token(idb)
    assert len(ta) >= 22 and ta != tb and reg.register(a, "training") == ida and reg.owner_token(ida) == ta
    assert reg.is_owner(ida, ta) and reg.is_owner(idb, tb)
    assert not any(reg.is_owner(ida, t) for t in (tb, ida, "", None, ta[:-1], ta + "x"))
    assert not reg.is_owner("unknown", ta) and reg.owner_token("unknown") is None
    assert reg.id_of(a) == ida and reg.id_of(Switch()) is None
    assert ta not in repr(reg.entries())


def test_a_run_before_its_first_epoch_says_what_it_is_doing():
    """A deep run's first epoch is its longest wait: the running run's line says so (and
    how long it has waited) instead of "epoch 0 of N"; from the first epoch on, the count."""
    record = RunRecord(1, TrainConfig(dataset="karate", num_layers=32, epochs=50), "#1")
    record.status, record.started_at = "running", time.monotonic()
    assert record.message.startswith("first epoch of 50 (32 layers)") and "s so far" in record.message
    record.events.append({"type": "epoch", "epoch": 1, "time": 0.5})
    assert record.message.startswith("epoch 1 of 50")
