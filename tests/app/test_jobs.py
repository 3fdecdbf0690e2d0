"""Background jobs: the watchdog stops what nobody polls; a session's training queue;
a tuning study in a thread."""
from __future__ import annotations

import threading
import time

import pytest
import torch

from app_shared.background import TrainingWorker
from app_shared.run_records import SESSION_RUN_COLUMNS, RunRecord, runs_frame
from app_shared.training_session import COMPARE_SAMPLERS, TrainingSession, device_label
from app_shared.tuning_job import TuningJob
from app_shared.watchdog import Watchdog
from dropedge_core.studies.tuned import load_study, train_request
from dropedge_core.training import TrainConfig


class FakeJob:
    def __init__(self):
        self.stopped = threading.Event()
        self.done = False

    def stop(self):
        self.stopped.set()


class FakeClock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


def _karate(**kw) -> TrainConfig:
    values = dict(dataset="karate", num_layers=3, hidden=16, epochs=8, diag_every=4)
    return TrainConfig(**(values | kw))


# -- Watchdog ----------------------------------------------------------------------------


def test_watchdog_rules_with_a_fake_clock():
    clock, job = FakeClock(), FakeJob()
    dog = Watchdog(job, idle_timeout=10, max_seconds=60, clock=clock, start=False)
    clock.now += 9
    assert dog.check() is None and not job.stopped.is_set()
    dog.heartbeat()  # polled: the idle clock restarts
    clock.now += 9
    assert dog.check() is None and dog.idle_seconds == 9
    clock.now += 2
    assert dog.check() == "idle" and job.stopped.is_set()
    assert "10 s" in dog.message and "tab" in dog.message
    # the wall-time limit holds whatever the heartbeats say
    clock2, job2 = FakeClock(), FakeJob()
    dog2 = Watchdog(job2, idle_timeout=10, max_seconds=60, clock=clock2, start=False)
    for _ in range(7):
        clock2.now += 9
        dog2.heartbeat()
        dog2.check()
    assert dog2.fired == "max_seconds" and job2.stopped.is_set()
    assert "wall-time limit of 60 s" in dog2.message
    # a finished job is left alone
    clock3, job3 = FakeClock(), FakeJob()
    dog3 = Watchdog(job3, idle_timeout=10, clock=clock3, start=False)
    job3.done = True
    clock3.now += 100
    assert dog3.check() is None and not job3.stopped.is_set()


def _until(condition, what: str, limit: float = 30.0) -> None:
    """Wait for a state of the watchdog's thread (the limit only ends a hung test)."""
    deadline = time.monotonic() + limit
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.005)


def test_watchdog_thread_stops_an_unpolled_job_and_spares_a_polled_one():
    """The thread's rules under a fake clock: however slow the machine, the polled job is
    never more than 0.1 s (of the fake clock) without a heartbeat, the idle one is."""
    clock, polled, idle = FakeClock(), FakeJob(), FakeJob()
    dog_polled = Watchdog(polled, idle_timeout=0.25, check_every=0.005, clock=clock)
    dog_idle = Watchdog(idle, idle_timeout=0.25, check_every=0.005, clock=clock)
    for _ in range(10):
        dog_polled.heartbeat()
        clock.now += 0.1
        dog_polled.heartbeat()
    _until(lambda: idle.stopped.is_set(), "the unpolled job was not stopped")
    assert dog_idle.fired == "idle"
    _until(lambda: not dog_idle.alive, "the watchdog's thread did not end after firing")
    assert not polled.stopped.is_set() and dog_polled.fired is None and dog_polled.alive
    # the poller goes away: stopped too
    clock.now += 0.3
    _until(lambda: polled.stopped.is_set(), "the abandoned job was not stopped")
    assert dog_polled.fired == "idle"
    # cancel retires it without stopping, however long nobody polls after
    other = FakeJob()
    dog = Watchdog(other, idle_timeout=0.1, check_every=0.005, clock=clock)
    dog.cancel()
    _until(lambda: not dog.alive, "a cancelled watchdog kept watching")
    clock.now += 10
    assert dog.check() is None and not other.stopped.is_set()


def test_watchdog_validates():
    with pytest.raises(TypeError, match="stop"):
        Watchdog(object())
    with pytest.raises(ValueError, match="idle_timeout"):
        Watchdog(FakeJob(), idle_timeout=0, start=False)


# -- TrainingSession -------------------------------------------------------------------------


def test_session_queue_compare_samplers(karate):
    session = TrainingSession(idle_timeout=30)
    base = _karate()
    records = session.submit([base.replace(sampler=s) for s in COMPARE_SAMPLERS], karate)
    assert [r.status for r in records] == ["running", "queued", "queued"]
    assert session.active and session.current is records[0]
    assert session.wait(60)
    assert [r.status for r in session.runs] == ["finished"] * 3
    assert [r.sampler for r in session.runs] == ["nodrop", "dropedge", "dropedge++"]
    assert session.runs[2].label == "#3 DropEdge++ · GCN L=3 · seed 0"
    for r in session.runs:
        assert r.epochs_done == 8 and r.device == "cpu" and r.message == "finished 8 epochs"
        assert [d["epoch"] for d in r.diagnostics] == [4, 8]
    # one seed: the same weights; NoDrop keeps every edge, so its MEN is the largest
    men = {r.sampler: r.diagnostics[-1]["men"] for r in session.runs}
    assert men["nodrop"] >= men["dropedge"] and men["nodrop"] >= men["dropedge++"]
    table = runs_frame(session.runs)
    assert list(table.columns) == list(SESSION_RUN_COLUMNS) and len(table) == 3
    assert table["test_acc"].between(0, 1).all()
    session.clear()
    assert session.runs == [] and not session.active


class SignallingWorker(TrainingWorker):
    """A real training thread that sets ``epoch_seen`` once its first epoch's event is out."""

    def __init__(self, config, graph=None, epoch_seen: threading.Event | None = None):
        self.epoch_seen = epoch_seen or threading.Event()
        super().__init__(config, graph)

    def _push(self, event: dict) -> None:
        super()._push(event)
        if event["type"] == "epoch":
            self.epoch_seen.set()


def test_session_stop_drops_the_queue(karate):
    epoch_seen = threading.Event()
    session = TrainingSession(idle_timeout=30, worker_factory=lambda config, graph: SignallingWorker(
        config, graph, epoch_seen))
    session.submit([_karate(epochs=100_000, diag_every=0), _karate()], karate)
    assert epoch_seen.wait(60), "the first run never trained an epoch"
    session.stop()
    assert session.wait(10)
    first, second = session.runs
    assert first.status == "stopped" and "stopped by request" in first.message
    assert second.status == "stopped" and "dropped from the queue" in second.message


class UntilStopped:
    """A run that goes on until it is told to stop, then ends at once (as ``train`` does
    at its next epoch)."""

    END = {"type": "end", "reason": "stopped", "message": "stopped at epoch 1", "best_epoch": 1,
           "best_val_acc": 0.5, "test_acc": 0.4, "epochs_run": 1, "total_time": 0.1}

    def __init__(self):
        self._events, self.done = [{"type": "start", "device": "cpu"}], False

    def events_since(self, i):
        return list(self._events[i:])

    def stop(self):
        if not self.done:
            self._events.append(dict(self.END))
            self.done = True


def test_session_limits_with_a_fake_clock():
    """The session's driver applies the limits itself: no poll for ``idle_timeout``
    stops the run and drops the queue; the wall-time limit holds whoever polls."""
    clock = FakeClock()
    session = TrainingSession(idle_timeout=10, max_seconds=60, store=None, clock=clock,
                                   worker_factory=lambda config, graph: UntilStopped(), drive_every=3600)
    first, second = session.submit([_karate(), _karate(seed=1)])
    clock.now += 9
    session.advance()
    assert first.status == "running"
    session.poll()  # somebody watches: the idle clock restarts
    clock.now += 9
    session.advance()
    assert first.status == "running" and second.status == "queued"
    clock.now += 2  # 11 s without a poll
    session.advance()
    assert [first.status, second.status] == ["stopped", "stopped"] and not session.active
    assert "nobody polled the run for 10 s" in first.message and first.watchdog_stopped
    assert "dropped from the queue by the watchdog" in second.message
    # the wall-time limit: polled every 9 s, stopped after 60
    clock = FakeClock()
    session = TrainingSession(idle_timeout=10, max_seconds=60, store=None, clock=clock,
                                   worker_factory=lambda config, graph: UntilStopped(), drive_every=3600)
    (run,) = session.submit([_karate()])
    for _ in range(6):
        clock.now += 9
        session.poll()
    assert run.status == "running"
    clock.now += 9
    session.poll()
    assert run.status == "stopped" and "wall-time limit of 60 s" in run.message
    # no limits: nothing stops it
    clock = FakeClock()
    session = TrainingSession(idle_timeout=None, max_seconds=None, store=None, clock=clock,
                                   worker_factory=lambda config, graph: UntilStopped(), drive_every=3600)
    (run,) = session.submit([_karate()])
    clock.now += 1e6
    session.advance()
    assert run.status == "running"
    session.stop()
    assert session.wait(10) and run.status == "stopped" and not run.watchdog_stopped


def test_session_validates_its_limits():
    with pytest.raises(ValueError, match="idle_timeout"):
        TrainingSession(idle_timeout=0)
    with pytest.raises(ValueError, match="max_seconds"):
        TrainingSession(max_seconds=-1)


def test_a_live_run_has_two_threads(karate):
    """A Live run as the app starts one (no idle limit, the default wall-time limit):
    the worker that trains and the session's driver, no watchdog or other thread."""
    epoch_seen = threading.Event()
    before = set(threading.enumerate())
    session = TrainingSession(idle_timeout=None, store=None, worker_factory=lambda config, graph:
                                   SignallingWorker(config, graph, epoch_seen))
    assert session.max_seconds is not None  # the limit is there, applied without a thread
    session.submit([_karate(epochs=100_000, diag_every=0)], karate)
    assert epoch_seen.wait(60), "the run never trained an epoch"
    new = sorted(t.name for t in threading.enumerate() if t not in before)
    session.stop()
    assert session.wait(30)
    assert new == ["dropedge-live", "dropedge-train"], new


def test_session_stops_an_abandoned_queue(karate):
    """The tab closed mid-run: no poll comes; the driver stops the run (a real training
    thread) once the fake clock passed the idle limit, and nothing else starts."""
    clock = FakeClock()
    epoch_seen = threading.Event()
    session = TrainingSession(idle_timeout=30, clock=clock, drive_every=0.01,
                                   worker_factory=lambda config, graph: SignallingWorker(config, graph,
                                                                                         epoch_seen))
    session.submit([_karate(epochs=100_000, diag_every=0), _karate()], karate)
    worker = session._worker
    assert epoch_seen.wait(60)
    clock.now += 31
    assert worker.join(30), "the abandoned run kept going"
    assert worker.result.reason == "stopped" and worker.result.epochs_run < 100_000
    changes = session.poll()  # the user comes back
    assert [r.status for r in changes.ended] == ["stopped", "stopped"]
    assert "watchdog" in session.runs[0].message and "watchdog" in session.runs[1].message
    assert not session.active


def test_session_reports_errors():
    def broken(config, graph):
        raise RuntimeError("no GPU left\nsecond line")

    session = TrainingSession(worker_factory=broken)
    (record,) = session.submit([_karate()])
    assert record.status == "error" and record.message == "RuntimeError: no GPU left"
    assert not session.active


def test_sessions_are_independent(karate):
    """Two browser sessions at once: each sees only its own runs, numbering, figures and
    Stop; neither's queue moves the other's."""
    a, b = TrainingSession(idle_timeout=30), TrainingSession(idle_timeout=30)
    (ra,) = a.submit([_karate(epochs=100_000, diag_every=0)], karate)
    rb = b.submit([_karate(num_layers=2, seed=1, sampler="dropedge"), _karate(num_layers=2, seed=2)], karate)
    assert b.active and b.current is rb[0] and b.queued == [rb[1]]
    assert a.current is ra and a.queued == []
    assert a.figure("f", 1, lambda: "a's figure") == "a's figure"
    assert b.figure("f", 1, lambda: "b's figure") == "b's figure"  # not a's cached one
    assert b.wait(60)  # b's queue is worked off while a's run keeps going
    assert [r.status for r in b.runs] == ["finished", "finished"] and b.runs == rb
    assert [r.label.split()[0] for r in b.runs] == ["#1", "#2"]  # b numbers its own runs
    assert [r.config.seed for r in b.runs] == [1, 2]
    assert a.runs == [ra] and a.active and ra.status == "running"
    a.stop()  # a's Stop ends a's run only
    assert a.wait(10) and ra.status == "stopped"
    assert [r.status for r in b.runs] == ["finished", "finished"]
    b.clear()
    assert b.runs == [] and a.runs == [ra] and ra.label.startswith("#1 ")


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


# -- TuningJob ----------------------------------------------------------------------------


def test_tuning_job_runs_stops_and_is_watched(tmp_path, karate):
    storage = f"sqlite:///{tmp_path / 'tune.sqlite'}"
    base = TrainConfig(dataset="karate", num_layers=2, hidden=8, epochs=5, diag_every=0)
    job = TuningJob(base, 3, "t", storage, search="random", seed=0, graph=karate)
    assert job.join(60) and job.error is None
    assert job.finished == 3 and job.status.startswith("finished 3 trials")
    frame = job.frame()
    assert len(frame) == 3 and set(frame["state"]) == {"COMPLETE"}
    assert frame.loc[0, "p_min"] == pytest.approx(base.p_min)  # the base point first
    best = job.best()
    request = train_request(best, base, "t")
    assert request["p_min"] == best["p_min"] and request["p_max"] >= request["p_min"]
    assert request["dataset"] == "karate" and "trial #" in request["source"]
    assert load_study("t", storage) is not None and load_study("nope", storage) is None
    # stop: the study ends after the running trial
    long = base.replace(epochs=100_000)
    job = TuningJob(long, 50, "t2", storage, graph=karate)
    _until(lambda: job.study.get_trials(deepcopy=False), "the study never started a trial")
    job.stop()  # mid-trial
    assert job.join(30) and job.finished <= 1 and "stopped" in job.status
    # nobody polls: the watchdog stops it
    job = TuningJob(long, 50, "t3", storage, graph=karate, idle_timeout=0.3)
    assert job.join(30) and job.watchdog.fired == "idle" and "watchdog" in job.status


class ScriptedWorker:
    """Replays a fixed event list, as a TrainingWorker would stream it."""

    def __init__(self, events):
        self._events, self.done, self.stopped = events, True, False

    def events_since(self, i):
        return list(self._events[i:])

    def stop(self):
        self.stopped = True


class EndingWorker(ScriptedWorker):
    """Its thread ends (end event pushed, then done) just after the poller read its
    events: the race a loaded machine showed as a stopped run marked "error"."""

    def __init__(self, events, end):
        super().__init__(list(events))
        self.done, self._end = False, end

    def events_since(self, i):
        out = super().events_since(i)
        if not self.done:
            self._events.append(self._end)
            self.done = True
        return out


def test_a_run_that_ends_between_two_looks_keeps_its_end():
    end = {"type": "end", "reason": "stopped", "message": "stopped at epoch 1", "best_epoch": 1,
           "best_val_acc": 0.5, "test_acc": 0.4, "epochs_run": 1, "total_time": 0.1}
    events = [{"type": "start", "device": "cpu"}, {"type": "epoch", "epoch": 1}]
    session = TrainingSession(worker_factory=lambda config, graph: EndingWorker(events, end), store=None)
    (record,) = session.submit([_karate()])
    session.poll()
    session.poll()
    assert record.status == "stopped" and not record.error and not session.active


def test_session_reports_a_nan_end():
    end = {"type": "end", "reason": "nan", "message": "training loss became nan at epoch 3 (...)",
           "best_epoch": 2, "best_val_acc": 0.5, "test_acc": 0.4, "epochs_run": 2, "total_time": 0.1}
    events = [{"type": "start", "device": "cpu"},
              {"type": "epoch", "epoch": 1}, {"type": "epoch", "epoch": 2}, end]
    session = TrainingSession(worker_factory=lambda config, graph: ScriptedWorker(events))
    session.submit([_karate()])
    changes = session.poll()
    (record,) = changes.ended
    assert record.status == "nan" and record.message.startswith("training loss became nan")
    assert record.epochs_done == 2 and record.row()["test_acc"] == 0.4 and not session.active


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
    from dropedge_core.data import reference
    from dropedge_core.store import ResultStore, run_key
    from dropedge_core.studies import depth
    from dropedge_core.studies.depth_view import depth_view
    from dropedge_core.studies.run_tables import cached_runs, empty_runs, store_runs

    monkeypatch.setenv("DROPEDGE_RESULTS", str(tmp_path / "results.sqlite"))
    study = dict(dataset="karate", split=None, backbones=["gcn"], depths=[2], samplers=["dropedge++"],
                 seeds=1, epochs=12, mode="depth recipe", p_min=0.3, p_max=0.8, kernel="linear",
                 directed=False)
    wanted = depth.depth_configs(study["dataset"], None, ["gcn"], [2], ["dropedge++"], 1, 12)[0]
    session = TrainingSession(idle_timeout=None, max_seconds=None)
    record = session.submit([wanted.replace(diag_every=5)])[0]  # the Live training page's diagnostics
    assert session.wait(60)
    assert record.status in ("finished", "early_stop")
    assert record.stored_key == run_key(wanted)
    store = ResultStore(tmp_path / "results.sqlite")
    cached = cached_runs(store_runs(store), empty_runs())
    view = depth_view(cached=cached, paper=reference.paper_accuracy_by_depth(),
                      **(study | {"split": wanted.split}))
    assert view.missing == [] and view.counts == {"store": 1, "bundled": 0}
    assert view.runs["test_acc"].iloc[0] == pytest.approx(store.get(wanted)["test_acc"])
    assert view.table["status"].tolist() == ["measured"]

    stopped = session.submit([wanted.replace(seed=1, epochs=5000)])[0]
    session.stop()
    assert session.wait(60) and stopped.status == "stopped" and stopped.stored_key is None
    assert len(store) == 1


# -- jobs that outlive the tab: the registry and the unwatched session -------------------------


class Switch:
    """A job whose activity the test sets."""

    def __init__(self, active: bool = True):
        self.active = active


def test_registry_finds_jobs_by_id_and_bounds_what_it_keeps():
    from app_shared.registry import JobRegistry, RegistryFull

    clock = FakeClock()
    reg = JobRegistry(keep_finished=60, max_finished=2, max_active=2, clock=clock)
    a, b = Switch(), Switch()
    ida, idb = reg.register(a, "training"), reg.register(b, "sweep")
    assert ida != idb and reg.register(a, "training") == ida  # one id per job
    assert reg.get(ida) is a and reg.get(ida, "training") is a and reg.get(ida, "sweep") is None
    assert reg.get("unknown") is None
    with pytest.raises(RegistryFull, match="2 jobs are running"):
        reg.register(Switch(), "training")  # a third running job is refused
    a.active = False  # a finished: kept, findable, and room for another
    clock.now += 30
    c = Switch()
    idc = reg.register(c, "training")
    assert reg.get(ida) is a and [e.job_id for e in reg.entries("training")] == [ida, idc]
    clock.now += 61  # a seen finished (at the last register) 61 s ago: expired
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
    # a finished job started again counts as running again (and may be refused)
    reg2 = JobRegistry(max_active=1, clock=clock)
    f = Switch(False)
    idf = reg2.register(f, "training")
    g = Switch()
    reg2.register(g, "training")
    with pytest.raises(RegistryFull):
        reg2.register(f, "training")
    g.active = False
    assert reg2.register(f, "training") == idf


def test_each_job_has_its_own_owner_token_and_an_id_is_not_one():
    """A job's owner token: 128 random bits, one per job, kept when the same job is
    registered again, out of the entry's repr; neither its id nor another job's token is
    accepted."""
    from app_shared.registry import JobRegistry

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


def test_a_session_without_idle_limit_trains_its_queue_to_the_end_unpolled(karate, tmp_path):
    """Nobody polls (the tab closed): the driver thread works off the whole queue and
    stores every run; a late poller with its own cursor still sees every change once."""
    from dropedge_core.store import ResultStore

    store = ResultStore(tmp_path / "results.sqlite")
    session = TrainingSession(idle_timeout=None, store=lambda: store, drive_every=0.01)
    records = session.submit([_karate(sampler=s, diag_every=0) for s in ("nodrop", "dropedge")], karate)
    _until(lambda: not session.active, "the queue did not finish without a poller", limit=120)
    assert [r.status for r in records] == ["finished", "finished"]
    assert sorted(store.get(r.config)["test_acc"] for r in records) == \
        sorted(r.end["test_acc"] for r in records)
    first = session.poll(0)
    assert first.started == records and first.ended == records
    assert session.poll(first.cursor).changed is False  # nothing new since
    assert session.poll(0).ended == records  # another poller, from the start


def test_a_run_meeting_a_locked_store_is_stored_once_it_is_free_and_the_queue_goes_on(karate, tmp_path):
    """Issue 29, class 3: another program holds the SQLite store (``BEGIN EXCLUSIVE``) when
    the first run ends; it is written again in the background once the lock goes, the
    second run of the queue still trains (a store note is not the watchdog's), and polls
    never wait on the retries."""
    import sqlite3

    from dropedge_core.store import ResultStore

    path = tmp_path / "results.sqlite"
    store = ResultStore(path, timeout=0.05)
    holder = sqlite3.connect(path, isolation_level=None, timeout=0)
    holder.execute("BEGIN EXCLUSIVE")
    session = TrainingSession(idle_timeout=None, store=lambda: store, drive_every=0.01)
    session.store_delays = (0.2,) * 50
    first, second = session.submit([_karate(sampler=s, diag_every=0) for s in ("nodrop", "dropedge")], karate)
    _until(lambda: first.over and (first.note or first.stored_key), "the first run did not end", limit=120)
    assert first.stored_key is None and "busy" in first.note, first.note
    holder.execute("COMMIT")
    holder.close()
    _until(lambda: not session.active, "the queue stopped at the busy store", limit=120)
    _until(lambda: first.stored_key is not None, "the busy run was never stored", limit=60)
    assert second.status == "finished" and second.stored_key
    assert "stored once the results store was free" in first.note
    assert store.get(first.config)["test_acc"] == first.end["test_acc"]


def test_a_run_before_its_first_epoch_says_what_it_is_doing():
    """A deep run's first epoch is its longest wait: the running run's line says so (and
    how long it has waited) instead of "epoch 0 of N"; from the first epoch on, the count."""
    from app_shared.run_records import RunRecord

    record = RunRecord(1, TrainConfig(dataset="karate", num_layers=32, epochs=50), "#1")
    record.status, record.started_at = "running", time.monotonic()
    assert record.message.startswith("first epoch of 50 (32 layers)") and "s so far" in record.message
    record.events.append({"type": "epoch", "epoch": 1, "time": 0.5})
    assert record.message.startswith("epoch 1 of 50")
