"""The teaching pages through AppTest: the figures' data, not just that a chart exists (issue 16)."""
from __future__ import annotations

import math
import re

import numpy as np
import pytest
from dropedge_core import datasets
from scipy import stats
from streamlit.testing.v1 import AppTest

from dropedge_explorer.studies import lesson, teaching
from tests.helpers.app import APP, TIMEOUT, _charts, _ok, _values

MERGE_PAGE = "app_pages/class_merge.py"


def _page(page: str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.run()
    at.switch_page(page).run()
    _ok(at)
    return at


def _frame_x(fig: dict, frame: int, trace: int) -> np.ndarray:
    return _values(fig["frames"][frame]["data"][trace]["x"]).astype(float)


def _curves(fig: dict) -> dict[str, np.ndarray]:
    """The class separation per model, as drawn (the left panel's lines)."""
    return {t["name"]: _values(t["y"]).astype(float) for t in fig["data"] if t["xaxis"] == "x"}


def _kind(y: np.ndarray, test_acc: float | None, majority: float) -> str:
    """Read off the drawn numbers by hand: a test accuracy under the largest class's share
    + 10 points did not train; else merging with depth is a fall below 0.1 after being at
    least 0.1, or a last layer at most half an earlier best; else apart."""
    if test_acc is not None and test_acc < majority + 0.10:
        return "untrained"
    up = np.flatnonzero(y >= 0.1)
    if up.size and (y[up[0] + 1:] < 0.1).any():
        return "merges"
    return "merges" if y.argmax() < len(y) - 1 and y[-1] <= 0.5 * y.max() else "apart"


def _trend(at: AppTest) -> str:
    return next(m.value for m in at.markdown if m.value.startswith("Here "))


def _test_accuracies(fig: dict) -> dict[str, float | None]:
    """Each panel's test accuracy, as its title shows it (``· test 26.5 %``)."""
    out = {}
    for a in fig["layout"]["annotations"]:
        name = re.search(r"<b>(.*?)</b>", a["text"]).group(1)
        acc = re.search(r"test ([0-9.]+) %", a["text"])
        out[name] = float(acc.group(1)) / 100 if acc else None
    return out


def _majority(labels) -> float:
    y = np.asarray(labels)
    y = y[y >= 0]
    return max(np.sum(y == c) for c in set(y.tolist())) / y.size


WORDS = {"untrained": "did not train", "merges": "merges the classes with depth",
         "apart": "keeps the classes apart"}


def _caption_agrees(at: AppTest, labels, first: int = 1) -> dict[str, str]:
    """The trend caption says, for every model drawn, what its drawn numbers say."""
    text, kinds = _trend(at), {}
    charts = _charts(at)
    accs = _test_accuracies(charts["class_merge"])
    majority = _majority(labels)
    for name, y in _curves(charts["class_separation"]).items():
        kinds[name] = _kind(y, accs[name], majority)
        for kind, words in WORDS.items():
            assert (f"**{name} {words}**" in text) == (kinds[name] == kind), (name, y, accs[name], text)
        if kinds[name] == "untrained":
            assert f"test accuracy {accs[name]:.1%}, against {majority:.1%}" in text
        elif y.min() < 0.1 and kinds[name] == "merges":
            assert f"{y.min():.3f} at layer {int(y.argmin()) + first}" in text
        else:
            assert f"{y[-1]:.2f} at layer {len(y) - 1 + first}" in text
    merged = [n for n, k in kinds.items() if k == "merges"]
    assert ("No model shown merges the classes with depth" in text) == (not merged)
    if merged and len(merged) < len(kinds):
        assert text.startswith(f"Here the classes merge with depth under {', '.join(merged)}; ")
    return kinds


def test_class_merge_opens_on_a_model_that_trains_and_says_what_the_bundle_shows():
    at = _page(MERGE_PAGE)
    charts = _charts(at)
    assert set(charts) == {"class_merge", "class_separation"}
    assert at.radio(key="cm_source").value == "bundled"
    snaps = teaching.load_snapshots(teaching.BUNDLED_SNAPSHOT)
    fig = charts["class_merge"]
    assert [f["name"] for f in fig["frames"]] == [f"L{k}" for k in range(1, 16)]  # GCN-16: 15 hidden layers
    titles = [a["text"] for a in fig["frames"][6]["layout"]["annotations"]]
    for text, item in zip(titles, snaps.items):
        assert f"separation {item.separation[6]:.2f}" in text
    xs = _frame_x(fig, 6, 0)
    assert xs.size > 10 and np.isfinite(xs).all()
    curves = _curves(charts["class_separation"])
    assert curves["NoDrop"] == pytest.approx(snaps.items[0].separation, abs=1e-6)
    kinds = _caption_agrees(at, snaps.labels)
    assert set(kinds.values()) == {"apart"}  # all three train; none merges with depth
    # the sentence over every bundled model, counted here from their files
    trained = merging_depth = total = 0
    for path, _ in teaching.BUNDLED_VIEWS.values():
        b = teaching.load_snapshots(path)
        for item in b.items:
            kind = _kind(np.array(item.separation), item.test_acc, _majority(b.labels))
            trained += kind != "untrained"
            merging_depth += kind == "merges"
            total += 1
    info = at.info[0].value
    assert f"Of the {total} models here, {trained} train and {total - trained} do not" in info
    if merging_depth == 0:
        assert f"In none of the {trained} that train do the classes merge with depth" in info

    at.slider(key="cm_layer").set_value(5).run()
    _ok(at)
    assert _charts(at)["class_merge"]["layout"]["sliders"][0]["active"] == 4

    for source in [k for k in teaching.BUNDLED_VIEWS if k != "bundled"]:  # every other bundled model
        at.radio(key="cm_source").set_value(source).run()
        _ok(at)
        b = teaching.load_snapshots(teaching.BUNDLED_VIEWS[source][0])
        drawn = _curves(_charts(at)["class_separation"])
        assert drawn["NoDrop"] == pytest.approx(b.items[0].separation, abs=1e-6)
        _caption_agrees(at, b.labels)


def test_propagation_alone_merges_the_classes_with_depth_and_the_caption_says_so(karate):
    """The case where the caption must say the opposite of the default view's: averaging
    with no weights on karate, where NoDrop's separation rises and then falls to nearly 0."""
    at = _page(MERGE_PAGE)
    at.radio(key="cm_source").set_value("propagation").run()
    _ok(at)
    assert at.slider(key="cm_steps").value == 32
    charts = _charts(at)
    assert [f["name"] for f in charts["class_merge"]["frames"]][:2] == ["L0", "L1"]  # step 0 is X
    curves = _curves(charts["class_separation"])
    assert all(len(y) == 33 for y in curves.values())
    # step 0 is X itself: its separation, computed here from the features and labels
    x, y = karate.x.double().numpy(), karate.y.numpy()
    total = ((x - x.mean(0)) ** 2).sum()
    between = sum((y == c).sum() * ((x[y == c].mean(0) - x.mean(0)) ** 2).sum() for c in set(y.tolist()))
    assert curves["NoDrop"][0] == pytest.approx(between / total, abs=1e-6)
    kinds = _caption_agrees(at, karate.y.numpy(), first=0)
    assert kinds["NoDrop"] == "merges" and curves["NoDrop"].max() > 0.5 and curves["NoDrop"][-1] < 0.1
    assert any(c.value.startswith("karate: 32 averaging steps") for c in at.caption)


def test_class_merge_trains_three_models_on_karate_in_the_session():
    at = _page(MERGE_PAGE)
    at.sidebar.slider(key="layers").set_value(4).run()
    at.radio(key="cm_source").set_value("session").run()
    _ok(at)
    assert not _charts(at)  # nothing until asked
    at.slider(key="cm_epochs").set_value(50).run()
    at.button(key="cm_train").click().run()
    _ok(at)
    fig = _charts(at)["class_merge"]
    assert len(fig["frames"]) == 3  # 4 layers: 3 hidden
    assert sum(len(_values(t["x"])) for t in fig["data"]) == 3 * 34
    assert any(c.value.startswith("karate: 4-layer GCN") for c in at.caption)
    _caption_agrees(at, datasets.load("karate").y.numpy())  # a model trained here: caption = its numbers


def test_class_merge_refuses_big_graphs_in_the_session():
    if datasets.availability("cora") == "download":
        pytest.skip("Cora not available offline")
    at = _page(MERGE_PAGE)
    at.radio(key="cm_source").set_value("session").run()
    at.sidebar.selectbox(key="dataset").set_value("cora").run()
    _ok(at)
    assert not _charts(at) and not at.button
    assert "2708 nodes" in at.info[-1].value


THEORY_PAGE = "app_pages/theory.py"
PAPER_PAGE = "app_pages/paper_tables.py"


def test_theory_page_draws_lambda_the_bound_and_men_star():
    at = _page(THEORY_PAGE)
    charts = _charts(at)
    assert set(charts) == {"theory_lambda", "theory_decay", "theory_men"}
    lam = {t["name"]: _values(t["y"]).astype(float) for t in charts["theory_lambda"]["data"]}
    assert list(lam) == ["NoDrop", "DropEdge", "LI", "LID", "DropEdge++", "full graph"]
    assert lam["full graph"] == pytest.approx([0.8961420] * 8, abs=1e-6)  # karate, 8 layers
    assert lam["NoDrop"] == pytest.approx(lam["full graph"])
    decay = {t["name"]: _values(t["y"]).astype(float) for t in charts["theory_decay"]["data"]}
    bound = decay["bound λ^l (full graph)"]
    assert bound == pytest.approx(0.8961420 ** np.arange(9), rel=1e-5)
    assert (decay["NoDrop"] <= bound + 1e-6).all()
    men = charts["theory_men"]["data"]
    assert len(men) == 10 and men[0]["name"].startswith("NoDrop: MEN")
    assert (_values(men[0]["y"]).astype(float) <= _values(men[1]["y"]).astype(float) * (1 + 1e-9)).all()

    at.multiselect(key="th_samplers").set_value(["lid"]).run()
    _ok(at)
    assert [t["name"] for t in _charts(at)["theory_lambda"]["data"]] == ["LID", "full graph"]


def _best_table(at: AppTest):
    return next(df.value for df in at.dataframe if "paper_acc" in df.value.columns)


def test_paper_tables_page_measures_epoch_times_and_shows_best_accuracy():
    at = _page(PAPER_PAGE)
    fig = _charts(at)["paper_epoch_time"]
    assert len(_values(fig["data"][0]["y"])) == 3  # the paper's three samplers only
    at.slider(key="pt_epochs").set_value(5).run()
    at.button(key="pt_measure").click().run()
    _ok(at)
    fig = _charts(at)["paper_epoch_time"]
    sampling = _values(fig["data"][0]["y"]).astype(float)
    assert len(sampling) == 6 and (sampling > 0).all()
    assert sampling[1::2].tolist() == [0.0015, 0.0022, 0.0043]  # measured, then the paper, per sampler
    best = _best_table(at)
    cora_gcn = best[(best["dataset"] == "cora") & (best["backbone"] == "gcn")].iloc[0]
    assert cora_gcn["paper_acc"] == 83.1
    # our number: the mean of the cell's DropEdge++ runs of today's stream (2), from the file
    import pandas as pd

    from dropedge_explorer.studies import paper_views

    raw = pd.read_csv(paper_views.BEST_RUNS_FILE)
    today = raw[(raw["sampler"] == "dropedge++") & (raw["stream"] == 2) & (raw["split"] == "semi")]
    (dataset, backbone), cell = next(iter(today.groupby(["dataset", "backbone"])))
    row = best[(best["dataset"] == dataset) & (best["backbone"] == backbone)].iloc[0]
    assert row["ours_acc"] == pytest.approx(100 * cell["test_acc"].mean(), abs=0.01)
    at.radio(key="pt_split").set_value("full").run()
    best = _best_table(at)
    assert best[best["dataset"] == "cora"]["paper_acc"].tolist() == [88.30, 88.48, 88.55, 89.22]


LESSON_PAGE = "app_pages/lesson.py"


def _names_y(fig: dict) -> dict[str, np.ndarray]:
    return {t["name"]: _values(t["y"]).astype(float) for t in fig["data"]}


def _answer(at: AppTest) -> str:
    text = next(i.value for i in at.info if i.value.startswith("**What the numbers say.**"))
    return text.removeprefix("**What the numbers say.** ")


def test_the_lesson_walks_through_seven_steps_each_with_its_figure_and_answer():
    at = _page(LESSON_PAGE)
    seg = at.get("button_group")[0]
    assert seg.options == ["1 · Averaging", "2 · How fast", "3 · DropEdge", "4 · LID vs LDD", "5 · FD",
                           "6 · Trained", "7 · Verdicts"]
    # 1: averaging only, 16 steps + X itself, one panel (NoDrop), opening at the last step
    fig = _charts(at)["lesson_figure"]
    assert [f["name"] for f in fig["frames"]][:2] == ["L0", "L1"] and len(fig["frames"]) == 17
    assert any(m.value.startswith("**Ask the class:**") for m in at.markdown)
    graph = datasets.load("csbm", split="per-class")
    for key in ("propagation", "depth", "dropping", "lid_ldd", "fd"):
        if key != "propagation":
            at.get("button_group")[0].set_value(key).run()
            _ok(at)
        layers = at.slider(key=f"lesson_layers_{key}").value
        keep = {"keep": at.slider(key="lesson_keep").value} if key in ("dropping", "fd") else {}
        expected = lesson.step_sentence(lesson.step_numbers(key, graph, layers=layers, seed=0, **keep))
        assert _answer(at) == expected  # the answer beside the figure is the one the numbers give
    # 3: the numbers drawn are those of the sentence: the ε line and both samplers' distances
    at.get("button_group")[0].set_value("dropping").run()
    fig = _charts(at)["lesson_figure"]
    assert {t["name"] for t in fig["data"]} == {"NoDrop", "DropEdge"}
    assert "ε-smoothing step" in _answer(at)

    at.get("button_group")[0].set_value("result").run()
    _ok(at)
    fig = _charts(at)["lesson_figure"]
    assert len(fig["frames"]) == 15 and fig["layout"]["sliders"][0]["active"] == 14
    deep = teaching.load_snapshots(teaching.BUNDLED_SNAPSHOT)
    for text, item in zip([a["text"] for a in fig["layout"]["annotations"]], deep.items):
        assert f"separation {item.separation[-1]:.2f}" in text
    assert _answer(at) == lesson.step_sentence(lesson.step_numbers("result"))
    at.radio(key="lesson_recipe").set_value("old-defaults").run()
    _ok(at)
    old = teaching.load_snapshots(teaching.BUNDLED_FAILING)
    titles = [a["text"] for a in _charts(at)["lesson_figure"]["layout"]["annotations"]]
    assert all(f"test {100 * i.test_acc:.1f} %" in t for t, i in zip(titles, old.items))

    at.get("button_group")[0].set_value("verdicts").run()
    _ok(at)
    fig = _charts(at)["lesson_figure"]
    assert {t["name"] for t in fig["data"]} == {"NoDrop", "DropEdge", "DropEdge++"}
    assert _answer(at) == lesson.step_sentence(lesson.step_numbers("verdicts"))
    glossary = at.dataframe[-1].value
    assert "paired test, Holm" in glossary["symbol"].tolist()


def test_edge_sampler_draws_two_samplers_side_by_side_on_the_same_nodes_and_layer():
    """Issue 24 (7): LID beside LDD at layer 2 of 8 on karate (M = 78, keep rates 0.3 -> 0.8)."""
    at = _page("app_pages/edge_sampler.py")
    at.sidebar.selectbox(key="sampler").set_value("lid").run()
    assert "edges_beside" not in _charts(at)  # one drawing until asked
    at.selectbox(key="compare").set_value("ldd").run()
    at.slider(key="edge_layer").set_value(2).run()
    _ok(at)
    charts = _charts(at)
    lid, ldd = charts["edges"]["data"], charts["edges_beside"]["data"]
    # by hand: k_l = floor(M (p_min + (p_max - p_min) l / (L - 1))); LDD keeps LID's count of layer L-1-l
    k = [math.floor(78 * (0.3 + 0.5 * layer / 7)) for layer in range(8)]
    assert (lid[1]["name"], ldd[1]["name"]) == (f"kept ({k[2]})", f"kept ({k[5]})")
    assert (lid[0]["name"], ldd[0]["name"]) == (f"dropped ({78 - k[2]})", f"dropped ({78 - k[5]})")
    for a, b in zip(lid[3:], ldd[3:]):  # the same nodes at the same positions
        assert _values(a["x"]).astype(float) == pytest.approx(_values(b["x"]).astype(float))
    assert any(c.value == f"Layer 2, the same 78 drawn edges: LID keeps {k[2]}, LDD keeps {k[5]}."
               for c in at.caption)
    at.sidebar.selectbox(key="sampler").set_value("ldd").run()  # the sidebar takes the one beside
    _ok(at)
    assert at.selectbox(key="compare").value == "none" and "edges_beside" not in _charts(at)


def test_edge_sampler_shows_the_receptive_field_of_the_picked_node():
    at = _page("app_pages/edge_sampler.py")
    fig = _charts(at)["reach"]
    assert len(fig["frames"]) == 8  # karate, 8 layers
    assert fig["layout"]["title"]["text"].startswith("Node 0 reaches ")
    at.selectbox(key="reach_node").set_value(33).run()
    _ok(at)
    fig = _charts(at)["reach"]
    assert fig["layout"]["title"]["text"].startswith("Node 33 reaches ")
    star = fig["data"][4]
    assert star["name"] == "node 33" and list(_values(star["customdata"])) == [33]
    reached = [int(c[0]) for c in _values(fig["frames"][0]["data"][3]["customdata"])]
    assert 33 in reached and len(reached) < 34



def test_paper_tables_page_draws_the_bundled_men_analysis():
    from dropedge_explorer.studies import paper_views

    runs = paper_views.read_men_analysis()
    at = _page(PAPER_PAGE)
    fig = _charts(at)["paper_men_analysis"]
    by_name = {}
    for t in fig["data"]:
        by_name.setdefault(t["name"], []).append(_values(t["x"]).astype(float))
    lid = runs[runs["sampler"] == "lid"]["men"].to_numpy()
    assert by_name["LID"][0] == pytest.approx(lid)
    assert set(by_name) == {"DropEdge", "LI", "LID", "LDD"}


def test_paper_tables_page_draws_the_per_cell_search():
    """The searched best of each cell, drawn against depth: one point per sampler and
    searched depth at the mean of its bundled runs."""
    from dropedge_explorer.studies import cell_search

    runs = cell_search.bundled_view("cora", "semi")["runs"]
    at = _page(PAPER_PAGE)
    assert not at.exception
    fig = _charts(at)["pt_search"]
    def solid(t) -> bool:
        return "dash" not in str(t.get("line", {}).get("dash", ""))

    def measured(name: str) -> list:
        return [t for t in fig["data"] if t.get("name") == name
                and t.get("mode", "").startswith("lines") and solid(t)]

    assert measured("DropEdge"), [t.get("name") for t in fig["data"]]
    y = _values(measured("DropEdge")[0]["y"]).astype(float)
    want = runs[runs["sampler"] == "dropedge"].groupby("layers")["test_acc"].mean().to_numpy() * 100
    assert y == pytest.approx(want, abs=0.05)
    # DropEdge++'s search was drawn from an older sampler stream: no measured curve until searched again
    assert not measured("DropEdge++") and "dropedge++" not in set(runs["sampler"])
    tables = [d.value for d in at.dataframe if "trials" in d.value.columns]
    assert len(tables) == 1 and set(tables[0]["sampler"]) == set(runs["sampler"])
    assert (tables[0]["seeds"] == 5).all()
    # the ordering claim on the searched cells: p from scipy over the paired seeds, Holm by hand
    # over each claim's three depths; a verdict only where the corrected p is below 0.05
    claims = [d.value for d in at.dataframe if "Holm p" in d.value.columns]
    present = len(set(runs["sampler"]))  # one claim per pair of samplers, at each of 3 depths
    assert len(claims) == 1 and len(claims[0]) == 3 * present * (present - 1) // 2
    claims = claims[0]
    acc = runs.pivot_table(index=["layers", "seed"], columns="sampler", values="test_acc")
    names = {"DropEdge++": "dropedge++", "DropEdge": "dropedge", "NoDrop": "nodrop"}
    for claim, part in claims.groupby("claim"):
        better, worse = (names[s] for s in claim.split(" ≥ "))
        raw = {L: stats.ttest_rel(acc.loc[L][better], acc.loc[L][worse]).pvalue for L in part["L"]}
        ranked, running = sorted(raw, key=raw.get), 0.0
        for k, L in enumerate(ranked):
            running = max(running, min(1.0, (3 - k) * raw[L]))
            row = part[part["L"] == L].iloc[0]
            assert row["p"] == f"{raw[L]:.3f}" and row["Holm p"] == f"{running:.3f}"
            assert (row["verdict"] == "not shown") == (running >= 0.05)
        assert part["family"].str.endswith("every depth of cora/semi/GCN (3 tests)").all()
