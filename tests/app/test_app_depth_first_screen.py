"""The Depth study's first screen (issue 43, item 5): on karate, the sidebar's default with
no runs, one click opens the dataset with the most runs; the paper's claim is shown as the
paper's, never as "what to look for", beside what the runs drawn show — a sentence
re-derived here from the page's own run table with scipy's paired t-test and Holm's
correction written out by hand."""
from __future__ import annotations

import re

import numpy as np
import pandas as pd
from scipy import stats

from tests.helpers.app import _app, _ok

DEPTH_PAGE = "app_pages/depth_study.py"


def _texts(at) -> list[str]:
    return [m.value for m in at.markdown] + [i.value for i in at.info]


def _runs_shown(at) -> pd.DataFrame:
    return next(d.value for d in at.dataframe
                if {"sampler", "seed", "layers", "test_acc"} <= set(d.value.columns))


def _holm_verdicts(runs: pd.DataFrame, better: str, worse: str) -> dict[int, str]:
    """Per depth: "above", "below" or "neither", from ttest_rel and Holm done here."""
    rows = []
    for L, part in runs.groupby("layers"):
        acc = part.pivot_table(index="seed", columns="sampler", values="test_acc")
        if better not in acc or worse not in acc:
            continue
        both = acc[[better, worse]].dropna()
        d = (both[better] - both[worse]).to_numpy()
        p = stats.ttest_rel(both[better], both[worse]).pvalue if len(d) > 1 and d.std() > 1e-12 else np.nan
        rows.append((int(L), float(d.mean()), float(p)))
    tested = sorted((r for r in rows if r[2] == r[2]), key=lambda r: r[2])
    m, running, adjusted = len(tested), 0.0, {}
    for i, (L, _, p) in enumerate(tested):  # Holm: step-down, running maximum
        running = max(running, min(1.0, (m - i) * p))
        adjusted[L] = running
    return {L: ("neither" if adjusted.get(L, 1.0) >= 0.05 else "above" if mean > 0 else "below")
            for L, mean, _ in rows}


def test_karate_offers_the_study_with_runs_and_the_claim_is_the_papers(tmp_path, monkeypatch):
    monkeypatch.setenv("DROPEDGE_RESULTS", str(tmp_path / "results.sqlite"))  # nothing stored
    at = _app()
    at.switch_page(DEPTH_PAGE).run()
    _ok(at)
    assert at.session_state["dataset"] == "karate"
    assert not any("What to look for" in t for t in _texts(at))
    offer = next(t for t in at.info if "No runs of karate yet" in t.value)
    assert "cora/semi" in offer.value  # the most bundled runs (327 at this commit)
    at.button(key="ds_open_bundled").click().run()
    _ok(at)
    assert (at.session_state["dataset"], at.session_state["split"]) == ("cora", "semi")
    assert not any("No runs of" in t.value for t in at.info)
    texts = _texts(at)
    assert not any("What to look for" in t for t in texts)
    claim = next(t for t in texts if t.startswith("**The paper's claim**"))
    assert "**What the runs drawn here show**" in claim
    # every depth's verdict in the sentence, re-derived from the runs the page lists
    runs = _runs_shown(at)
    runs = runs[runs["backbone"] == "gcn"]
    decided = 0
    for better, worse, b, w in (("dropedge", "nodrop", "DropEdge", "NoDrop"),
                                ("dropedge++", "dropedge", "DropEdge++", "DropEdge")):
        verdicts = _holm_verdicts(runs, better, worse)
        assert verdicts, (better, worse)
        said = _said(claim, b, w)
        decided += sum(v != "neither" for v in verdicts.values())
        assert said == {v: sorted(L for L, x in verdicts.items() if x == v)
                        for v in ("above", "below", "neither")}, (better, claim)
    assert decided  # the bundled Cora runs decide some depth (L = 32): swapping two series is seen


def _said(claim: str, b: str, w: str) -> dict[str, list[int]]:
    """The depths the claim's sentence for ``b`` against ``w`` puts above, below and neither."""
    heads = [f"{b} is shown above {w}", f"{b} is shown below {w}", f"{b} against {w}:"]
    start = min(i for i in (claim.find(h) for h in heads) if i >= 0)
    sentence = claim[start:].split(" (paired t-tests")[0]
    out, last = {"above": [], "below": [], "neither": []}, "neither"
    for clause in sentence.split("; "):
        kind = ("above" if clause.startswith(heads[0]) else "below" if clause.startswith(heads[1])
                else "neither" if "either way" in clause else None)
        if kind is None:  # a further depth of the clause before ("L = 32 (+4.0 points, ...)")
            kind = last
        depths = [int(x) for x in re.findall(r"L = (\d+)", clause)]
        if kind == "neither":
            depths = [int(x) for x in re.findall(r"\d+", clause.split("either way at L = ")[1])]
        out[kind] += depths
        last = kind
    return {k: sorted(v) for k, v in out.items()}


def test_a_dataset_with_runs_gets_no_offer(tmp_path, monkeypatch):
    monkeypatch.setenv("DROPEDGE_RESULTS", str(tmp_path / "results.sqlite"))
    at = _app()
    at.selectbox(key="dataset").select("citeseer").run()
    at.switch_page(DEPTH_PAGE).run()
    _ok(at)
    assert not any("No runs of" in t.value for t in at.info)
    assert at.session_state["dataset"] == "citeseer"
