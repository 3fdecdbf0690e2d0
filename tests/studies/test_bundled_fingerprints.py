"""Every bundled run is pinned to the code that ships (issue 34, item 1).

A bundled row carries its sampler stream and its fingerprint (the masks its seed draws in its
first epochs, its initial weights). Here every row's config is rebuilt from its columns
(proven by its key) and its fingerprint recomputed with the code under test: a change that
makes any bundled run's seed draw other masks or other weights fails, naming the runs, until
they are re-run or their stream is bumped (``streams.STREAMS``) on purpose.

Issue 47: a row also carries ``run_masks_fp``, the digest of every epoch's masks. The commit
under test picks a rotating sample of rows (:func:`_rotation`; ``DROPEDGE_ROTATION=<commit>``
picks another commit's): their ``run_masks_fp`` is recomputed by sampling alone (always with a
DropEdge++ row of 8 layers or more, so a stream change from the 4th epoch on at depth fails),
and two of them (up to 8 layers) are re-trained with every recorded number compared. The
``deep`` tier recomputes every row's ``run_masks_fp``.
"""
from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import torch
from dropedge_core import _streams as streams
from dropedge_core import samplers

from dropedge_explorer.store import run_key
from dropedge_explorer.studies import fingerprints
from dropedge_explorer.studies import run_tables as runs
from dropedge_explorer.training import TrainConfig
from dropedge_explorer.training._fingerprint import fingerprint, init_digest, masks_digest, run_masks_digest
from tests.helpers import REPO
from tests.helpers.runs import assert_retrains, streams_to_compare

ABLATION = runs.BUNDLED_DIR.parent / "ablation"


def _bundled_rows() -> pd.DataFrame:
    """Every row of every bundled run file (the depth runs and the ablation), with its file."""
    parts = []
    for path in [*runs.bundled_files(), *sorted(ABLATION.glob("*.csv"))]:
        df = pd.read_csv(path, dtype={"key": str, "settings": str, **{c: str for c in runs.PRINT_COLUMNS}})
        parts.append(df.assign(file=Path(path).name, backfilled="run_masks_fp" in df.columns))
    return pd.concat(parts, ignore_index=True)


def _name(row) -> str:
    return (f"{row.get('file', '')}: {row['dataset']} {row['split']} {row['backbone']}-{row['layers']} "
            f"{row['sampler']} seed {row['seed']}")


def test_every_bundled_row_names_its_stream_and_fingerprint():
    rows = _bundled_rows()
    assert len(rows) > 800
    for column in ("stream", "masks_fp", "init_fp"):
        assert column in rows, f"a bundled file lacks {column!r}"
    blank = rows[rows["masks_fp"].isna() | rows["init_fp"].isna()]
    assert blank.empty, "rows without a fingerprint: " + "; ".join(
        _name(r) for _, r in blank.head(5).iterrows())
    assert set(rows["masks_fp"].str.len()) == {16} and set(rows["init_fp"].str.len()) == {16}


def test_every_bundled_row_rebuilds_the_config_of_its_key():
    rows = _bundled_rows()
    for _, row in rows.iterrows():
        config = fingerprints.row_config(row)
        assert run_key(config, stream=int(row["stream"])) == row["key"], _name(row)


def test_bundled_fingerprints_are_those_of_the_code_that_ships(cora, citeseer):
    """The CI check: every bundled run of today's stream is what this code draws."""
    rows = _bundled_rows()
    changed = fingerprints.drifted(rows)
    assert changed.empty, (
        f"{len(changed)} bundled run(s) are no longer produced by this code (masks or initial weights "
        "changed): re-run them, or bump streams.STREAMS and label them as an older stream: "
        + "; ".join(f"{_name(r)} masks {r['masks_fp']}->{r['now_masks_fp']} "
                    f"init {r['init_fp']}->{r['now_init_fp']}" for _, r in changed.head(20).iterrows()))


def test_older_stream_rows_count_for_no_config_asked_today():
    rows = _bundled_rows()
    old = fingerprints.older(rows)
    assert len(old), "no older-stream rows: the labelled DropEdge++ runs before the rewrite are gone"
    assert set(old["sampler"]) <= {name for name, v in streams.STREAMS.items() if v > 1}
    for _, row in old.head(40).iterrows():
        config = fingerprints.row_config(row)
        assert run_key(config) != row["key"], _name(row)  # today's key: another run
    assert fingerprints.current(rows).index.intersection(old.index).empty


# -- the check itself fails: a made-up bundled table on karate, then a changed stream -------

def _karate_rows(sampler: str, seeds=(0, 1), layers: int = 8) -> pd.DataFrame:
    configs = [TrainConfig(dataset="karate", backbone="gcn", num_layers=layers, sampler=sampler, seed=s)
               for s in seeds]
    df = pd.DataFrame([runs.run_row(c) for c in configs])
    prints = [fingerprint(c) for c in configs]
    return df.assign(masks_fp=[p.masks for p in prints], init_fp=[p.init for p in prints])


def test_drifted_is_empty_at_the_code_that_made_the_rows():
    assert fingerprints.drifted(_karate_rows("dropedge++")).empty


def test_a_changed_mask_stream_names_the_runs(monkeypatch):
    rows = _karate_rows("dropedge++")
    original = samplers.EdgeSampler.sample

    def other_stream(self, graph, num_layers, generator=None):
        torch.rand(1, generator=generator)  # one extra draw: every later mask differs
        return original(self, graph, num_layers, generator=generator)

    monkeypatch.setattr(samplers.EdgeSampler, "sample", other_stream)
    changed = fingerprints.drifted(rows)
    assert list(changed["seed"]) == [0, 1]
    assert (changed["now_masks_fp"] != changed["masks_fp"]).all()
    assert (changed["now_init_fp"] == changed["init_fp"]).all()


def test_a_changed_init_names_the_runs(monkeypatch):
    rows = _karate_rows("nodrop")
    from dropedge_explorer.training import _seeding as seeding
    from dropedge_explorer.training import trainer

    original = seeding.build_model

    def other_init(config, g, device):
        model = original(config, g, device)
        with torch.no_grad():
            next(model.parameters()).mul_(1.0 + 1e-6)
        return model

    monkeypatch.setattr(trainer, "build_model", other_init)
    from dropedge_explorer.training import _fingerprint as fp_module

    monkeypatch.setattr(fp_module, "build_model", other_init)
    changed = fingerprints.drifted(rows)
    assert len(changed) == 2 and (changed["now_init_fp"] != changed["init_fp"]).all()


def test_a_bumped_stream_takes_rows_out_of_the_verdicts(monkeypatch):
    rows = _karate_rows("lid")
    assert len(fingerprints.current(rows)) == 2
    monkeypatch.setitem(streams.STREAMS, "lid", 2)
    assert fingerprints.current(rows).empty and len(fingerprints.older(rows)) == 2
    config = fingerprints.row_config(rows.iloc[0])  # the row's own stream still proves its key
    assert run_key(config) != rows.iloc[0]["key"]


# -- the digests against hand-made bytes ----------------------------------------------------

def test_masks_digest_is_sha256_of_shapes_and_bytes():
    import hashlib

    a = torch.tensor([[True, False, True]])
    expected = hashlib.sha256(repr((1, 3)).encode() + bytes([1, 0, 1])).hexdigest()[:16]
    assert masks_digest([a]) == expected
    assert masks_digest([a]) != masks_digest([a.reshape(3, 1)])  # the shape counts


def test_run_masks_digest_is_sha256_of_shapes_and_packed_bits():
    import hashlib

    a = torch.tensor([[True, False, True], [False, False, False]])
    b = torch.ones(1, 9, dtype=torch.bool)
    expected = hashlib.sha256(repr((2, 3)).encode() + bytes([0b10100000]) + repr((1, 9)).encode()
                              + bytes([0b11111111, 0b10000000])).hexdigest()[:16]
    assert run_masks_digest([a, b]) == expected
    assert run_masks_digest([a]) != run_masks_digest([a.reshape(3, 2)])  # the shape counts


def test_init_digest_sees_one_changed_weight():
    model = torch.nn.Linear(3, 2)
    before = init_digest(model)
    with torch.no_grad():
        model.weight[0, 0] += 1e-7
    assert init_digest(model) != before


def test_the_fingerprint_is_the_trainers_first_masks_and_weights():
    """Against the trainer itself: the masks its first epochs train on (recorded through the
    sampler) and its model's weights before the first step."""
    from dropedge_explorer.training import trainer

    config = TrainConfig(dataset="karate", backbone="gcn", num_layers=6, sampler="dropedge++", seed=3,
                         epochs=3, patience=0, diag_every=0)
    seen = []
    original = samplers.EdgeSampler.sample

    def record(self, graph, num_layers, generator=None):
        masks = original(self, graph, num_layers, generator=generator)
        seen.append(masks.clone())
        return masks

    init = {}
    from dropedge_explorer.training import _seeding as seeding

    build = seeding.build_model

    def keep_init(c, g, device):
        model = build(c, g, device)
        init["digest"] = init_digest(model)
        return model

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(samplers.EdgeSampler, "sample", record)
        mp.setattr(trainer, "build_model", keep_init)
        trainer.train(config)
    fp = fingerprint(config)
    assert fp.masks == masks_digest(seen[:3])
    assert fp.init == init["digest"]


# -- every epoch's masks, and re-training, for a sample the commit rotates (issue 47) --------

#: Sampling work the default tier recomputes, in DropEdge++-epochs (about 3 ms of CPU each on
#: Cora: ~10 s), each sampler's epoch weighted by its cost (the kernel samplers' weights cost
#: more per epoch), and the most layer-epochs a re-trained row may cost.
SAMPLED_WORK = 3000
SAMPLER_COST = {"nodrop": 0.1, "dropedge": 2.0, "dropedge++": 1.0, "fd": 8.0, "li": 25.0, "lid": 25.0,
                "ldd": 25.0}
RETRAIN_COST = 1200


def _rotation() -> str:
    """The commit under test (``DROPEDGE_ROTATION`` overrides it: rerun another commit's sample)."""
    chosen = os.environ.get("DROPEDGE_ROTATION", "").strip()
    if chosen:
        return chosen
    try:
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=REPO, capture_output=True, text=True,
                              timeout=30).stdout.strip()
    except OSError:
        head = ""
    return head or "no-commit"


def _ranked(rows: pd.DataFrame, rotation: str) -> pd.DataFrame:
    """``rows`` in an order only the rotation and each row's key fix."""
    rank = rows["key"].map(lambda k: hashlib.sha256(f"{rotation}:{k}".encode()).hexdigest())
    return rows.assign(_rank=rank).sort_values("_rank", kind="stable").drop(columns="_rank")


def rotating_sample(rows: pd.DataFrame, rotation: str, budget: float = SAMPLED_WORK) -> pd.DataFrame:
    """Rows of today's stream whose ``run_masks_fp`` the default tier recomputes: a DropEdge++
    row of 8 layers or more that ran 4 epochs or more, a NoDrop and a DropEdge row, then more in
    the rotation's order while their work (:data:`SAMPLER_COST`) fits ``budget``."""
    ranked = _ranked(fingerprints.current(rows), rotation)
    work = ranked["epochs_run"] * ranked["sampler"].map(SAMPLER_COST).fillna(25.0)
    deep = ranked[(ranked["sampler"] == "dropedge++") & (ranked["layers"] >= 8) & (ranked["epochs_run"] >= 4)]
    picks = list(deep.index[:1])
    picks += [ranked[ranked["sampler"] == s].index[0] for s in ("nodrop", "dropedge")
              if (ranked["sampler"] == s).any()]
    spent = float(work[picks].sum())
    for i, cost in work.items():
        if i not in picks and spent + cost <= budget:
            picks.append(i)
            spent += float(cost)
    return ranked.loc[picks]


def _run_masks_drift(rows: pd.DataFrame) -> list[str]:
    now = fingerprints.run_masks_rows(rows)
    return [f"{_name(r)}: run_masks_fp {r['run_masks_fp']} -> {now[i]}" for i, r in rows.iterrows()
            if now[i] != r["run_masks_fp"]]


def _with_run_masks(rows: pd.DataFrame) -> pd.DataFrame:
    """The rows of files that have the ``run_masks_fp`` column (``bundle_reruns.py --backfill``
    adds it to a file with every current row's digest; a file without it is not backfilled yet)."""
    return rows[rows["backfilled"]]


def test_every_current_row_carries_its_run_masks_digest():
    rows = fingerprints.current(_with_run_masks(_bundled_rows()))
    assert len(rows), "no bundled file has run_masks_fp: python docs/tools/bundle_reruns.py --backfill"
    blank = rows[rows["run_masks_fp"].isna()]
    assert blank.empty, ("rows without run_masks_fp (python docs/tools/bundle_reruns.py --backfill): "
                         + "; ".join(_name(r) for _, r in blank.head(5).iterrows()))


def test_a_rotating_sample_draws_every_epochs_masks_as_bundled(cora, citeseer):
    """The CI check on every epoch's masks: the commit's sample, recomputed by sampling only."""
    rotation = _rotation()
    sample = rotating_sample(_with_run_masks(_bundled_rows()), rotation)
    assert ((sample["sampler"] == "dropedge++") & (sample["layers"] >= 8)).any()
    drift = _run_masks_drift(sample)
    assert not drift, (f"rotation {rotation[:12]} (DROPEDGE_ROTATION={rotation} reruns it): {len(drift)} "
                       "bundled run(s) are no longer drawn by this code in some epoch: "
                       + "; ".join(drift[:10]))


@pytest.mark.deep
@pytest.mark.skipif(os.environ.get("DROPEDGE_DEEP_RERUNS") != "1",
                    reason="every bundled row's masks take minutes: DROPEDGE_DEEP_RERUNS=1 pytest -m deep")
def test_every_bundled_row_draws_every_epochs_masks_as_bundled(cora, citeseer):
    drift = _run_masks_drift(fingerprints.current(_with_run_masks(_bundled_rows())))
    assert not drift, f"{len(drift)} bundled run(s) drift: " + "; ".join(drift[:20])


def retrain_sample(rows: pd.DataFrame, rotation: str, count: int = 2) -> pd.DataFrame:
    """``count`` rows of today's stream the commit re-trains: up to 8 layers, without batch norm
    (its known rounding amplifier, ``training/seed_batch.py``), costing at most
    :data:`RETRAIN_COST` layer-epochs; the first a DropEdge++ row (of 8 layers when one fits)."""
    rows = fingerprints.current(rows)
    rows = rows[(rows["layers"] <= 8) & (rows["layers"] * rows["epochs_run"] <= RETRAIN_COST)
                & ~rows["settings"].fillna("").str.contains("batch_norm=True")
                & rows["dataset"].isin(["cora", "citeseer", "karate"])]
    ranked = _ranked(rows, rotation)
    plus = ranked[ranked["sampler"] == "dropedge++"]
    first = (plus[plus["layers"] == 8] if (plus["layers"] == 8).any() else plus).head(1)
    return pd.concat([first, ranked.drop(first.index).head(count - len(first))])


def test_a_rotating_sample_retrains_to_every_recorded_number(cora, citeseer):
    """Two bundled runs re-trained by the trainer: the key and every digest the row carries
    that does not depend on float rounding exactly (``final_fp`` does: not compared); the
    accuracies and epochs exactly on the machine that trained the row, within
    :data:`~tests.helpers.runs.RERUN_ACC_TOLERANCE` on a CPU whose float kernels round
    otherwise (:func:`~tests.helpers.runs.assert_retrains`)."""
    from dropedge_explorer.training import train

    rotation = _rotation()
    for _, row in retrain_sample(_bundled_rows(), rotation).iterrows():
        config = fingerprints.row_config(row)
        result = train(config)
        where = f"rotation {rotation[:12]} (DROPEDGE_ROTATION={rotation}): {_name(row)}"
        assert run_key(config) == row["key"], where
        verdict = assert_retrains({"test_acc": result.test_acc, "best_val_acc": result.best_val_acc,
                                   "epochs_run": result.epochs_run}, row, where)
        for name in streams_to_compare(verdict, result.epochs_run, int(row["epochs_run"])):
            if isinstance(row.get(name), str) and row[name]:
                assert result.fingerprint[name] == row[name], f"{where}: {name}"


def test_the_rotation_changes_with_the_commit_and_keeps_a_deep_dropedge_pp_row():
    rows = _with_run_masks(_bundled_rows())
    a, b = rotating_sample(rows, "commit-a"), rotating_sample(rows, "commit-b")
    assert list(a.index) != list(b.index)
    assert list(a.index) == list(rotating_sample(rows, "commit-a").index)
    for sample in (a, b):
        assert ((sample["sampler"] == "dropedge++") & (sample["layers"] >= 8)).any()
        work = sample["epochs_run"] * sample["sampler"].map(SAMPLER_COST).fillna(25.0)
        assert work.sum() <= SAMPLED_WORK + 3 * 800  # the budget, and the three rows always taken


def test_a_change_from_the_fourth_epoch_on_fails_the_full_run_check(monkeypatch):
    """The 3-epoch fingerprint cannot see a stream that changes from the 4th epoch on; the
    full-run digest does (karate, 8 layers, made here at the code that ships)."""
    rows = _karate_rows("dropedge++")
    rows = rows.assign(epochs_run=6, run_masks_fp=fingerprints.run_masks_rows(rows.assign(epochs_run=6)))
    original = samplers.EdgeSampler.sample
    epochs: dict[int, int] = {}  # per seed: the epochs its stream has drawn

    def later_extra_draw(self, graph, num_layers, generator=None):
        seed = generator.initial_seed()
        epochs[seed] = epochs.get(seed, 0) + 1
        if epochs[seed] >= 4:  # from the 4th epoch on
            torch.rand(1, generator=generator)
        return original(self, graph, num_layers, generator=generator)

    monkeypatch.setattr(samplers.EdgeSampler, "sample", later_extra_draw)
    assert fingerprints.drifted(rows).empty  # the first three epochs are unchanged
    epochs.clear()
    assert len(_run_masks_drift(rows)) == 2


# -- exports carry the stored fingerprint; bundling refuses a run another code made -----------

def _stored(tmp_path, config: TrainConfig):
    from dropedge_explorer.store import ResultStore
    from dropedge_explorer.training import train

    store = ResultStore(tmp_path / "runs.sqlite")
    store.put(train(config))
    return store


def test_an_export_carries_the_fingerprint_recorded_at_training(tmp_path):
    config = TrainConfig(dataset="karate", num_layers=8, sampler="dropedge++", epochs=6, patience=0,
                         dropout=0.5, diag_every=0, seed=2)
    store = _stored(tmp_path, config)
    stored = store.get(config)
    row = runs.read_runs(runs.export_runs(store, tmp_path / "runs.csv")).iloc[0]
    for name in runs.PRINT_COLUMNS:
        assert row[name] == stored[name] and len(row[name]) == 16, name
    assert row["masks_fp"] == fingerprint(config).masks  # what bundling recomputes: equal


def test_bundling_refuses_a_run_trained_by_other_code(tmp_path, monkeypatch):
    """A run trained with one extra draw in the sampler, then bundled by today's code: its
    stored digests are not what today's code computes; bundling names it and refuses."""
    config = TrainConfig(dataset="karate", num_layers=8, sampler="dropedge++", epochs=6, patience=0,
                         diag_every=0, seed=4)
    original = samplers.EdgeSampler.sample

    def other_stream(self, graph, num_layers, generator=None):
        torch.rand(1, generator=generator)
        return original(self, graph, num_layers, generator=generator)

    with monkeypatch.context() as mp:
        mp.setattr(samplers.EdgeSampler, "sample", other_stream)
        store = _stored(tmp_path, config)
    rows = runs.store_runs(store)
    named = r"karate per-class gcn-8 dropedge\+\+ seed 4.*masks_fp"
    with pytest.raises(fingerprints.FingerprintMismatch, match=named):
        runs.with_fingerprints(rows.copy(), refuse=True)
    exported = runs.with_fingerprints(rows.copy())  # an export keeps what the store holds
    assert exported.iloc[0]["masks_fp"] == rows.iloc[0]["masks_fp"] != fingerprint(config).masks


def test_bundling_fills_what_a_run_trained_before_lacks():
    rows = _karate_rows("dropedge", seeds=(0,)).assign(epochs_run=5, masks_fp="", init_fp="")
    done = runs.with_fingerprints(rows.copy(), refuse=True)
    config = fingerprints.row_config(rows.iloc[0])
    assert done.iloc[0]["masks_fp"] == fingerprint(config).masks
    assert done.iloc[0]["run_masks_fp"] == fingerprints.run_masks_rows(rows).iloc[0]
    assert done.iloc[0]["final_fp"] == "" and done.iloc[0]["dropout_fp"] == ""  # only training records them


def test_bundling_adds_a_new_cells_runs_only_into_the_file_named(tmp_path):
    """A run of a cell no bundled file holds joins no file, unless ``--into`` names one
    (the dry run says what each file would gain and writes nothing)."""
    config = TrainConfig(dataset="karate", num_layers=3, sampler="nodrop", epochs=4, patience=0,
                         diag_every=0, seed=7)
    _stored(tmp_path, config)
    tool = [sys.executable, "docs/tools/bundle_reruns.py", str(tmp_path / "runs.sqlite"), "--dry-run"]
    before = {p: p.read_bytes() for p in (REPO / "dropedge_explorer/assets").rglob("*.csv")}
    alone = subprocess.run(tool, cwd=REPO, capture_output=True, text=True, timeout=300)
    into = subprocess.run([*tool, "--into", "authors_presets.csv"], cwd=REPO, capture_output=True,
                          text=True, timeout=300)
    assert alone.returncode == 0 and alone.stdout == "", alone.stderr[-2000:]
    assert into.returncode == 0, into.stderr[-2000:]
    assert into.stdout.splitlines() == ["dropedge_explorer/assets/results/authors_presets.csv: "
                                        "+1 run(s) karate nodrop L=3 (1)"]
    assert {p: p.read_bytes() for p in before} == before  # a dry run writes nothing
