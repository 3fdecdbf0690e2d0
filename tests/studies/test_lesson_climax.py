"""Issue 43: the class-merging view's and the lesson's last steps' sentences hold against
numbers computed independently, and only today's snapshots are shown.

- The class-merging caption (:func:`merging.trend_caption`) of GCNs trained here on karate and
  csbm (two seeds): the separation of every hidden layer recomputed with numpy from the model's
  own forward pass, the rule re-applied, every quoted number read back; the 2-D picture's
  between-class share equals the number in its title. Swapping two samplers' series fails.
- The verdict step: the paired tests recomputed with scipy and Holm's correction by hand from
  the bundled CSVs. Swapping two samplers' accuracies fails.
- The trainability step and the bundled snapshots: their accuracies and separations read back
  from the files with numpy; their fingerprints equal the code's (no older-stream snapshot).
"""
from __future__ import annotations

import re

import numpy as np
import pytest
import torch
from dropedge_core import datasets
from dropedge_core.normalization import AdjacencyBuilder
from scipy import stats

from dropedge_explorer.figures import sampler_label
from dropedge_explorer.studies import lesson_climax, merging, run_tables, teaching
from dropedge_explorer.training import TrainConfig, prepare_features, train

LABEL = {"nodrop": "NoDrop", "dropedge": "DropEdge", "dropedge++": "DropEdge++"}


def _separation(h: np.ndarray, y: np.ndarray) -> float:
    hc = h - h.mean(0)
    total = (hc ** 2).sum()
    if total == 0:  # every node at one point (a dead layer): no separation, as the definition says
        return 0.0
    between = sum((y == c).sum() * (hc[y == c].mean(0) ** 2).sum() for c in np.unique(y))
    return float(between / total)


def _kind(sep: list[float], acc: float, majority: float) -> str:
    """The rule of :mod:`merging`, re-applied."""
    if acc < majority + merging.TRAINED_MARGIN:
        return "untrained"
    above = [k for k, v in enumerate(sep) if v >= merging.MERGED_BELOW]
    drops = bool(above) and any(v < merging.MERGED_BELOW for v in sep[above[0] + 1:])
    peak = max(sep)
    falls = sep.index(peak) < len(sep) - 1 and sep[-1] <= merging.MERGE_SHARE * peak
    return "merges" if drops or falls else "apart"


def check_caption(caption: str, truth: dict[str, dict]) -> None:
    """Each model's sentence: its case, and its first and last separation, as ``truth`` says."""
    for name, t in truth.items():
        words = {"untrained": "did not train", "merges": "merges the classes with depth",
                 "apart": "keeps the classes apart"}[t["kind"]]
        assert f"**{name} {words}**" in caption, (name, t["kind"], caption)
        m = re.search(rf"\*\*{re.escape(name)} [^*]+\*\*[^*]*?([\d.]+) at layer 1, ([\d.]+) "
                      r"at layer (\d+)", caption)
        if t["kind"] != "merges" or "at layer 1," in caption.split(f"**{name}")[1].split("**")[1]:
            assert m, (name, caption)
            ends = (float(m.group(1)), float(m.group(2)))
            assert ends == pytest.approx((t["sep"][0], t["sep"][-1]), abs=6e-3)


@pytest.fixture(scope="module", params=[(name, seed) for name in ("karate", "csbm") for seed in (0, 1)],
                ids=lambda p: f"{p[0]}-{p[1]}")
def trained(request):
    name, seed = request.param
    graph = datasets.load(name, split="per-class")
    base = TrainConfig(dataset=name, split="per-class", backbone="gcn", num_layers=4, epochs=30, patience=0,
                       seed=seed, diag_every=0, device="cpu", **teaching.DEEP_RECIPE)
    items, truth = [], {}
    y = graph.y.numpy()
    majority = np.bincount(y).max() / y.size
    for sampler in teaching.VIEW_SAMPLERS:
        config = base.replace(sampler=sampler)
        result = train(config, graph=graph)
        model = result.model.eval()
        with torch.no_grad():  # the model's own forward pass; everything after it is numpy
            _, hidden = model(prepare_features(graph.x), [AdjacencyBuilder(graph, "AN").full()] * 4,
                              return_hidden=True)
        sep = [_separation(h.double().numpy(), y) for h in hidden]
        truth[LABEL[sampler]] = {"sep": sep, "kind": _kind(sep, result.test_acc, majority)}
        items.append(teaching.view_of_model(graph, config, model, result.test_acc,
                                            result.history[-1]["test_acc"], result.epochs_run))
    return teaching.Snapshots(y.astype(np.int64), {}, items), truth


def test_the_class_merging_caption_holds_against_numpy_and_fails_with_samplers_swapped(trained):
    snaps, truth = trained
    for item, t in zip(snaps.items, truth.values()):
        assert item.separation == pytest.approx(t["sep"], abs=1e-6)
        for k in range(len(item.separation)):  # the picture says what the title says
            drawn = _separation(item.proj[k].astype(float), snaps.labels)
            assert drawn == pytest.approx(t["sep"][k], abs=1e-4)
    check_caption(merging.trend_caption(snaps, label=sampler_label), truth)
    a, b = snaps.items[0], snaps.items[2]
    a.separation, b.separation = b.separation, a.separation
    with pytest.raises(AssertionError):
        check_caption(merging.trend_caption(snaps, label=sampler_label), truth)


# ---- the verdict step --------------------------------------------------------------------

def _holm(p: list[float]) -> list[float]:
    order = np.argsort(p)
    out, running = np.empty(len(p)), 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (len(p) - rank) * p[i]))
        out[i] = running
    return list(out)


def independent_verdicts(runs) -> list[dict]:
    d, sp, b, s = lesson_climax.DEPTH_TABLE
    part = runs[(runs.dataset == d) & (runs.split == sp) & (runs.backbone == b) & (runs.settings == s)]
    acc = {(r.sampler, int(r.layers), int(r.seed)): r.test_acc for r in part.itertuples()}
    out = []
    for better, worse in (("dropedge++", "dropedge"), ("dropedge", "nodrop"), ("dropedge++", "nodrop")):
        fam = []
        for L in sorted({k[1] for k in acc}):
            seeds = sorted(k[2] for k in acc if k[:2] == (better, L) and (worse, L, k[2]) in acc)
            if len(seeds) < 2:
                continue
            x = np.array([acc[(better, L, s)] for s in seeds])
            z = np.array([acc[(worse, L, s)] for s in seeds])
            fam.append({"layers": L, "better": better, "worse": worse, "diff": float((x - z).mean()),
                        "p": float(stats.ttest_rel(x, z).pvalue)})
        for r, ph in zip(fam, _holm([r["p"] for r in fam])):
            r["clear"] = ph < 0.05
        out += fam
    return out


def check_verdicts(sentence: str, truth: list[dict]) -> None:
    clear = [r for r in truth if r["clear"]]
    assert f"of {len(truth)} paired comparisons" in sentence
    assert f"and {len(truth) - len(clear)} are not shown either way" in sentence or not clear
    for r in clear:
        side = "above" if r["diff"] > 0 else "below"
        assert (f"at {r['layers']} layers {LABEL[r['better']]} is {side} {LABEL[r['worse']]} by "
                f"{100 * abs(r['diff']):.1f} points") in sentence, (r, sentence)
    ahead = sorted({r["layers"] for r in clear if "dropedge++" in (r["better"], r["worse"])
                    and (r["diff"] > 0) == (r["better"] == "dropedge++")})
    assert (f"DropEdge++ is shown ahead of another sampler at {', '.join(map(str, ahead))} layers" if ahead
            else "DropEdge++ is shown ahead of no other sampler") in sentence


def test_the_verdict_sentence_holds_against_scipy_and_fails_with_samplers_swapped():
    runs = run_tables.bundled_results()
    truth = independent_verdicts(runs)
    assert truth, "no bundled runs of the verdict table"
    check_verdicts(lesson_climax.verdict_sentence(lesson_climax.verdict_numbers(runs)), truth)
    swapped = runs.copy()
    swapped["sampler"] = swapped["sampler"].replace({"dropedge": "nodrop", "nodrop": "dropedge"})
    swapped["key"] = swapped["key"] + "-swapped"
    with pytest.raises(AssertionError):
        check_verdicts(lesson_climax.verdict_sentence(lesson_climax.verdict_numbers(swapped)), truth)


# ---- the bundled snapshots and the trainability step --------------------------------------

def _bundled(path):
    if not path.is_file():
        pytest.fail(f"{path.name} is not bundled")
    return teaching.load_snapshots(path)


def check_trainability(sentence: str, files: dict) -> None:
    for recipe, snaps in files.items():
        y = snaps.labels[snaps.labels >= 0]
        majority = np.bincount(y).max() / y.size
        kinds = [_kind(list(s.separation), s.test_acc, majority) for s in snaps.items]
        accs = ", ".join(f"{LABEL[s.sampler]} {s.test_acc:.1%}" for s in snaps.items)
        assert accs in sentence, (recipe, accs, sentence)
        if all(k == "untrained" for k in kinds):
            assert f"under the {recipe} no model trains ({accs}" in sentence
        elif all(k != "untrained" for k in kinds):
            assert f"under the {recipe} every model trains ({accs})" in sentence
    old, deep = files["old defaults"], files["depth recipe"]
    y = deep.labels[deep.labels >= 0]
    majority = np.bincount(y).max() / y.size
    first = (all(_kind(list(s.separation), s.test_acc, majority) == "untrained" for s in old.items)
             and all(_kind(list(s.separation), s.test_acc, majority) == "apart" for s in deep.items))
    assert sentence.startswith("What fails first here is training, not the classes") == first


def test_the_trainability_sentence_holds_against_the_files_and_fails_with_recipes_swapped():
    files = {"old defaults": _bundled(teaching.BUNDLED_FAILING),
             "depth recipe": _bundled(teaching.BUNDLED_SNAPSHOT)}
    sentence = lesson_climax.trainability_sentence(
        lesson_climax.trainability_numbers(files["depth recipe"], files["old defaults"]))
    check_trainability(sentence, files)
    swapped = lesson_climax.trainability_sentence(
        lesson_climax.trainability_numbers(files["old defaults"], files["depth recipe"]))
    with pytest.raises(AssertionError):
        check_trainability(swapped, files)


@pytest.mark.parametrize("key", list(teaching.BUNDLED_VIEWS))
def test_every_bundled_view_is_of_todays_streams_and_its_picture_says_its_number(key, cora):
    snaps = _bundled(teaching.BUNDLED_VIEWS[key][0])
    assert teaching.snapshot_stream(snaps, cora) == "today"
    for s in snaps.items:
        for k in range(snaps.num_layers):  # float16 coordinates: two decimals
            drawn = _separation(s.proj[k].astype(float), snaps.labels)
            assert drawn == pytest.approx(s.separation[k], abs=0.01)


def test_a_snapshot_without_or_with_other_fingerprints_is_older(karate):
    base = TrainConfig(dataset="karate", split="per-class", backbone="gcn", num_layers=2, epochs=2, seed=0,
                       diag_every=0, device="cpu")
    snaps = teaching.Snapshots(np.zeros(34, dtype=np.int64),
                               teaching.snapshot_settings(karate, base, ["nodrop", "dropedge++"]), [])
    snaps.items = [teaching.Snapshot(n, np.zeros((1, 34, 2)), [0], [0], [0], None, None, 0, [1.0])
                   for n in ("nodrop", "dropedge++")]
    assert teaching.snapshot_stream(snaps, karate) == "today"
    snaps.settings["fingerprints"]["dropedge++"]["masks"] = "0" * 16
    assert teaching.snapshot_stream(snaps, karate) == "older"
    del snaps.settings["fingerprints"]
    assert teaching.snapshot_stream(snaps, karate) == "older"
