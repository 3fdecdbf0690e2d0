"""Extreme numbers, tiny inputs naming huge graphs, bad environment (issue 15, classes
1, 5, 8): one validation with the same limits for every command, exit 2 and one line,
nothing written, and peak memory measured in a fresh process."""
from __future__ import annotations

import json
import math
import os
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dropedge_explorer import env
from dropedge_explorer.data import csv_graph
from dropedge_explorer.training import (
    MAX_HIDDEN,
    MAX_LR,
    MAX_SEED,
    MAX_WEIGHT_DECAY,
    ConfigError,
    TrainConfig,
)
from tests.helpers import REPO
from tests.helpers.runs import measured, run_cli

QUICK = ["--dataset", "karate", "--layers", "2", "--epochs", "2", "--no-progress"]
# flag, value, what the one line must say
EXTREME = [
    ("--lr", "1e300", "lr must be in (0, 10]"), ("--lr", "inf", "lr must be in (0, 10]"),
    ("--lr", "nan", "lr must be in (0, 10]"), ("--lr", "0", "lr must be in (0, 10]"),
    ("--weight-decay", "inf", "weight_decay must be in [0, 10]"),
    ("--weight-decay", "-1e-9", "weight_decay must be in [0, 10]"),
    ("--hidden", "1000000000000", "hidden must be an integer in 1..4096"),
    ("--hidden", "0", "hidden must be an integer in 1..4096"),
    ("--seeds", str(2**63), "seed must be an integer in 0..2147483647"),
    ("--seeds", "12345678901234567890123", "seed must be an integer in 0..2147483647"),
    ("--seeds", "-5", "seed must be an integer in 0..2147483647"),
    ("--epochs", "10000000000", "epochs must be an integer in 1..100000"),
    ("--threads", "2048", "--threads must be an integer in 1..256"),
    ("--threads", "0", "--threads must be an integer in 1..256"),
]


@pytest.mark.parametrize("command", ["train", "sweep", "tune"])
@pytest.mark.parametrize("flag, value, says", EXTREME)
def test_extreme_numbers_are_one_line_everywhere(capsys, tmp_path, command, flag, value, says):
    argv = [command, *QUICK, f"{flag}={value}"]  # "=": a negative value is not read as a flag
    if command == "sweep":
        argv = ["sweep", "--datasets", "karate", "--layers", "2", "--epochs", "2", "--no-progress",
                "--store", str(tmp_path / "store.sqlite"), f"{flag}={value}"]
    if command == "tune":
        argv += ["--storage", str(tmp_path / "tune.sqlite"), "--trials", "1"]
    code, out, err = run_cli(capsys, *argv)
    assert code == 2, err
    assert err.count("\n") == 1 and err.startswith("error: ") and says in err, err
    assert out == ""
    assert list(tmp_path.iterdir()) == []  # nothing written: no store, no study


@pytest.mark.parametrize("flag, value, says", [("--seed", "-5", "--seed must be an integer in 0..2147483647"),
                                               ("--seed", str(2**63), "--seed must be"),
                                               ("--runs", "10000000000", "--runs must be an integer in"),
                                               ("--sources", "0", "--sources must be"),
                                               ("--threads", "2048", "--threads must be")])
def test_men_has_the_same_limits(capsys, flag, value, says):
    code, _, err = run_cli(capsys, "men", "--dataset", "karate", "--layers", "2", "--runs", "1",
                           f"{flag}={value}")
    assert code == 2 and err.count("\n") == 1 and says in err, err


@pytest.mark.parametrize("command", ["tune", "search"])
@pytest.mark.parametrize("value", ["1000000000000", "0", "-3", "100001"])
def test_tune_trials_are_bounded(capsys, tmp_path, command, value):
    """``tune --trials 1000000000000`` was killed by the kernel: now one line, and no study
    storage (or results store) is created; ``search`` has the same bound."""
    where = ["--storage", str(tmp_path / "t.sqlite")] + (["--store", str(tmp_path / "r.sqlite")]
                                                         if command == "search" else [])
    args = QUICK if command == "tune" else ["--dataset", "karate", "--layers", "2", "--no-progress"]
    code, out, err = run_cli(capsys, command, *args, f"--trials={value}", *where)
    assert code == 2 and err == f"error: --trials must be an integer in 1..100000 (got {value})\n", err
    assert out == "" and list(tmp_path.iterdir()) == []


@settings(max_examples=150, deadline=None)
@given(lr=st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(-10**30, 10**30)),
       wd=st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(-10**30, 10**30)),
       hidden=st.integers(-10**20, 10**20), seed=st.integers(-2**70, 2**70))
def test_config_accepts_exactly_the_bounded_values(lr, wd, hidden, seed):
    ok = (isinstance(lr, (int, float)) and not math.isnan(lr) and 0 < lr <= MAX_LR
          and not math.isnan(wd) and 0 <= wd <= MAX_WEIGHT_DECAY and 1 <= hidden <= MAX_HIDDEN
          and 0 <= seed <= MAX_SEED)
    try:
        TrainConfig(dataset="karate", lr=lr, weight_decay=wd, hidden=hidden, seed=seed)
    except ConfigError as exc:
        assert not ok
        assert "\n" not in str(exc)
        assert str(exc).split(" must be")[0] in ("lr", "weight_decay", "hidden", "seed")
    else:
        assert ok


@pytest.mark.parametrize("environ, says", [
    ({"DROPEDGE_TORCH_THREADS": "abc"}, "DROPEDGE_TORCH_THREADS must be an integer in 1..256 (got 'abc')"),
    ({"DROPEDGE_TORCH_THREADS": "9999"}, "DROPEDGE_TORCH_THREADS must be"),
    # a superscript two: str.isdigit() accepts it, int() raises ValueError (was a traceback)
    ({"DROPEDGE_TORCH_THREADS": "\u00b2"},
     "DROPEDGE_TORCH_THREADS must be an integer in 1..256 (got '\u00b2')"),
    ({"DROPEDGE_TORCH_THREADS": "\u0663"}, "DROPEDGE_TORCH_THREADS must be an integer in 1..256"),  # Arabic 3
    ({"DROPEDGE_MAX_JOB_SECONDS": "9" * 10_000}, "DROPEDGE_MAX_JOB_SECONDS must be a number in (0, 1e+07] "
     "(got '" + "9" * 80 + "'... (10000 characters))"),
    ({"DROPEDGE_MAX_JOB_SECONDS": "abc"},
     "DROPEDGE_MAX_JOB_SECONDS must be a number in (0, 1e+07] (got 'abc')"),
    ({"DROPEDGE_MAX_JOB_SECONDS": "nan"}, "DROPEDGE_MAX_JOB_SECONDS must be"),
    ({"DROPEDGE_SESSION_GRACE": "0"}, "DROPEDGE_SESSION_GRACE must be a number in (0, 1e+07] (got '0')"),
    ({"DROPEDGE_MAX_MEMORY_GB": "0"}, "DROPEDGE_MAX_MEMORY_GB must be a number in (0, 4096]"),
])
def test_bad_environment_is_one_line(monkeypatch, capsys, environ, says):
    for k, v in environ.items():
        monkeypatch.setenv(k, v)
    code, _, err = run_cli(capsys, "men", "--dataset", "karate", "--layers", "2", "--runs", "1")
    assert code == 2 and err == f"error: {says}" + err[len(says) + 7:] and err.count("\n") == 1, err


def test_every_bad_variable_is_named_at_once():
    with pytest.raises(env.EnvError) as info:
        env.settings({"DROPEDGE_TORCH_THREADS": "x", "DROPEDGE_MAX_MEMORY_GB": "-2"})
    assert "DROPEDGE_TORCH_THREADS" in str(info.value) and "DROPEDGE_MAX_MEMORY_GB" in str(info.value)
    assert env.settings_or_defaults({"DROPEDGE_MAX_JOB_SECONDS": "abc"}).max_job_seconds == 3600.0
    assert env.settings({"DROPEDGE_MAX_JOB_SECONDS": " 30 "}).max_job_seconds == 30.0
    assert env.settings({"DROPEDGE_SESSION_GRACE": "4"}).session_grace == 4.0
    assert env.settings_or_defaults({"DROPEDGE_SESSION_GRACE": "-1"}).session_grace == 150.0


# ----------------------------------------------------------------------------- memory


def peak(argv: list[str], tmp_path, extra_env: dict | None = None) -> tuple[int, str, float]:
    """Exit code, stderr and peak resident memory (MiB) of the CLI in a fresh process."""
    code = ("import resource, sys\n"
            "from dropedge_explorer.cli import main\n"
            "rc = main(sys.argv[1:])\n"
            "sys.stdout.flush()\n"
            "print('PEAK', resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, file=sys.stderr)\n"
            "sys.exit(rc)\n")
    proc = subprocess.run([sys.executable, "-c", code, *argv], cwd=REPO, capture_output=True, text=True,
                          timeout=600, env={**os.environ, **(extra_env or {})})
    lines = proc.stderr.strip().splitlines()
    mib = float(lines[-1].split()[1])
    return proc.returncode, "\n".join(lines[:-1]), mib


@pytest.fixture(scope="module")
def baseline(tmp_path_factory):
    """Peak of a run that allocates nothing big: the interpreter, torch, the package."""
    return peak(["men", "--dataset", "karate", "--layers", "2", "--runs", "1", "--json"],
                tmp_path_factory.mktemp("b"))[2]


def test_ten_byte_edge_list_stays_small(tmp_path, baseline):
    edges = tmp_path / "t.csv"
    edges.write_text("0,9999999\n")  # was 7.6-11.5 GB peak
    rc, err, mib = peak(["men", "--edges", str(edges), "--estimate", "--layers", "4", "--runs", "2",
                         "--no-progress", "--json"], tmp_path)
    assert rc == 0, err
    assert "renumbered them 0..1" in err
    assert mib - baseline < 400, (mib, baseline)
    labels = tmp_path / "l.csv"
    labels.write_text("0,a\n9999999,b\n")
    rc, err, mib = peak(["train", "--edges", str(edges), "--labels", str(labels), "--epochs", "2",
                         "--no-progress", "--json"], tmp_path)
    assert rc == 0, err
    assert mib - baseline < 400, (mib, baseline)


def test_wide_features_are_refused_before_allocating(tmp_path, baseline):
    features = tmp_path / "f.csv"
    features.write_text(",".join(["1"] * 4_500_000) + "\n" + ",".join(["0"] * 4_500_000) + "\n")  # 18 MB
    (tmp_path / "e.csv").write_text("0,1\n")
    rc, err, mib = peak(["men", "--edges", str(tmp_path / "e.csv"), "--features", str(features),
                         "--layers", "2", "--runs", "1"], tmp_path)
    assert rc == 2 and err == "error: f.csv has 4500000 columns on line 1; at most 100000 are allowed"
    assert mib - baseline < 200, (mib, baseline)


def test_a_run_above_the_limit_is_refused_before_allocating(tmp_path, baseline):
    rc, err, mib = peak(["train", "--dataset", "karate", "--layers", "256", "--hidden", "4096",
                         "--no-progress"], tmp_path)
    assert rc == 2 and err.startswith("error: training gcn L=256 hidden=4096 on karate") and \
        "above the limit of 8 GiB (DROPEDGE_MAX_MEMORY_GB)" in err, err
    assert mib - baseline < 100
    rc, err, _ = peak(["train", "--dataset", "karate", "--layers", "2", "--epochs", "1", "--no-progress"],
                      tmp_path, {"DROPEDGE_MAX_MEMORY_GB": "0.0001"})
    assert rc == 2 and "above the limit of 104.9 KiB" in err


def test_estimate_bounds_what_training_really_holds(tmp_path):
    """The estimate is within the calibration band (0.7-1.5x, ``tests/training/test_memory.py``) of
    the real growth of resident memory during a run (torch's allocations included): a
    guard that neither refuses what fits nor lets through what does not."""
    code = ("import re\n"
            "from dropedge_core import datasets\n"
            "from dropedge_explorer.training import TrainConfig, check_memory, train\n"
            "def kib(field):\n"
            "    return int(re.search(field + r':\\s+(\\d+)', open('/proc/self/status').read()).group(1))\n"
            "# load the code paths first: a first call's libraries and pools are not the run's\n"
            "warm = TrainConfig(dataset='karate', num_layers=2, epochs=1, diag_every=0)\n"
            "train(warm, graph=datasets.load('karate'))\n"
            "g = datasets.csbm(num_nodes=6000, num_features=300, p_intra=10 / 6000, p_inter=1 / 6000)\n"
            "open('/proc/self/clear_refs', 'w').write('5')  # reset the peak (VmHWM) to the current RSS\n"
            "before = kib('VmRSS') * 1024\n"
            "config = TrainConfig(dataset='csbm', num_layers=16, hidden=256, epochs=2, diag_every=0)\n"
            "train(config, graph=g)\n"
            "grew = kib('VmHWM') * 1024 - before\n"
            "est = check_memory(config, g)  # the trainer's own estimate of this config\n"
            "print(grew, est)\n")
    grew, est = measured(code)  # a fresh process, freed memory returned: see memory.peak_bytes
    assert 0.7 * grew <= est <= 1.5 * grew, (grew >> 20, est >> 20)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ids=st.lists(st.integers(0, csv_graph.MAX_NODES - 1), min_size=2, max_size=60, unique=True),
       data=st.data())
def test_sparse_ids_are_renumbered_preserving_the_graph(ids, data):
    """Any edge list over any ids: N stays within what the input holds, and the edges
    are the given ones under the order-preserving renumbering."""
    node = st.sampled_from(ids)
    pairs = data.draw(st.lists(st.tuples(node, node), min_size=1, max_size=80))
    if all(a == b for a, b in pairs):
        return
    text = "".join(f"{a},{b}\n" for a, b in pairs).encode()
    graph, notes = csv_graph.parse_graph(text)
    used = sorted({v for p in pairs for v in p})
    top = max(used) + 1
    if top - len(used) > max(csv_graph.COMPACT_ABOVE, len(used)):
        assert graph.num_nodes == len(used) and any("renumbered" in n for n in notes)
        rank = {v: i for i, v in enumerate(used)}
    else:
        assert graph.num_nodes == top
        rank = {v: v for v in used}
    want = {tuple(sorted((rank[a], rank[b]))) for a, b in pairs if a != b}
    got = {tuple(e) for e in graph.undirected_edges.t().tolist()}
    assert got == want
    assert graph.num_nodes <= max(2 * len(used), len(used) + csv_graph.COMPACT_ABOVE) + 1


def test_json_numbers_stay_numbers(capsys):
    code, out, _ = run_cli(capsys, "men", "--dataset", "karate", "--layers", "2", "--runs", "1", "--json")
    assert code == 0 and json.loads(out)["rows"]
    assert np.isfinite(json.loads(out)["rows"][0]["men_mean"])


def test_an_upload_above_the_memory_limit_is_an_upload_error(monkeypatch):
    monkeypatch.setenv("DROPEDGE_MAX_MEMORY_GB", "0.00001")
    text = "".join(f"{i},{i + 1}\n" for i in range(1999))
    # reading the files is checked first: 1999 commas + 1999 line ends + 1 cells
    with pytest.raises(csv_graph.UploadError,
                       match=r"reading the uploaded files \(up to 3999 cells\) would need"):
        csv_graph.parse_graph(text)
    # the graph is checked again once N is known (a second line: reading costs more per cell)
    monkeypatch.setattr(csv_graph.memory, "parse_bytes", lambda num_bytes, num_cells: 0)
    with pytest.raises(csv_graph.UploadError,
                       match=r"the uploaded graph \(N=2000, 1999 edge rows\) would need"):
        csv_graph.parse_graph(text)


def test_parse_estimate_bounds_what_reading_an_upload_really_holds():
    """Reading a features file of two million one-character rows (the shape that grew the
    app's server by gigabytes): the parse estimate is above the real growth of peak RSS
    and not absurdly so, and under a lower limit the files are refused before splitting."""
    code = ("import re, os\n"
            "from dropedge_explorer import memory\n"
            "from dropedge_explorer.data import csv_graph\n"
            "def kib(field):\n"
            "    return int(re.search(field + r':\\s+(\\d+)', open('/proc/self/status').read()).group(1))\n"
            "text = b'1\\n' * 2_000_000\n"
            "open('/proc/self/clear_refs', 'w').write('5')\n"
            "before = kib('VmRSS') * 1024\n"
            "g, _ = csv_graph.parse_graph(b'0,1\\n', features=text)\n"
            "grew = kib('VmHWM') * 1024 - before\n"
            "est = memory.parse_bytes(len(text) + 4, 2_000_004)  # 2M line ends + the edge row\n"
            "os.environ['DROPEDGE_MAX_MEMORY_GB'] = str(est / 2 / memory.GIB)\n"
            "open('/proc/self/clear_refs', 'w').write('5')\n"
            "before = kib('VmRSS') * 1024\n"
            "try:\n"
            "    csv_graph.parse_graph(b'0,1\\n', features=text)\n"
            "except csv_graph.UploadError as exc:\n"
            "    assert 'reading the uploaded files (up to 2000004 cells) would need' in str(exc), exc\n"
            "refused = kib('VmHWM') * 1024 - before\n"
            "print(grew, est, refused)\n")
    proc = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    grew, est, refused = (int(v) for v in proc.stdout.split())
    assert grew <= est <= 4 * grew, (grew >> 20, est >> 20)
    assert refused < 20 << 20, refused >> 20  # refused before any cell was split


def test_men_estimate_bounds_what_the_reach_tables_really_hold():
    """MEN from 512 sources on a ring of 200,000 nodes: the reach tables' real growth of
    peak RSS is below men_bytes, and not absurdly so (the whole table unpacked at once
    was 1226 MiB on a 1M-node ring against a 508 MiB estimate)."""
    code = ("import re, torch\n"
            "from dropedge_core import samplers\nfrom dropedge_explorer import memory\n"
            "from dropedge_core import metrics\n"
            "from dropedge_core.graph import Graph\n"
            "def kib(field):\n"
            "    return int(re.search(field + r':\\s+(\\d+)', open('/proc/self/status').read()).group(1))\n"
            "n = 200_000\n"
            "i = torch.arange(n)\n"
            "none = torch.zeros(n, dtype=torch.bool)\n"
            "ring = torch.stack([i[:-1], i[1:]])\n"
            "g = Graph('ring', torch.ones(n, 1), torch.full((n,), -1), ring, none, none, none, 0, {})\n"
            "masks = samplers.make('nodrop').sample(g, 2, torch.Generator().manual_seed(0))\n"
            "open('/proc/self/clear_refs', 'w').write('5')\n"
            "before = kib('VmRSS') * 1024\n"
            "metrics.men_estimate(g, masks, 512, torch.Generator().manual_seed(0))\n"
            "print(kib('VmHWM') * 1024 - before, memory.men_bytes(n, g.num_edges, 2, 512))\n")
    proc = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    grew, est = (int(v) for v in proc.stdout.split())
    assert grew <= est <= 4 * grew, (grew >> 20, est >> 20)
