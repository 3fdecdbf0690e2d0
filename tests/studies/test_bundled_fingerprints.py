"""Every bundled run is pinned to the code that ships (issue 34, item 1).

A bundled row carries its sampler stream and its fingerprint (the masks its seed draws in its
first epochs, its initial weights). Here every row's config is rebuilt from its columns
(proven by its key) and its fingerprint recomputed with the code under test: a change that
makes any bundled run's seed draw other masks or other weights fails, naming the runs, until
they are re-run or their stream is bumped (``streams.STREAMS``) on purpose.
"""
from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
import torch

from dropedge_core.method import _streams as streams
from dropedge_core.method import samplers
from dropedge_core.store import run_key
from dropedge_core.studies import fingerprints
from dropedge_core.studies import run_tables as runs
from dropedge_core.training import TrainConfig
from dropedge_core.training._fingerprint import fingerprint, init_digest, masks_digest

ABLATION = runs.BUNDLED_DIR.parent / "ablation"


def _bundled_rows() -> pd.DataFrame:
    """Every row of every bundled run file (the depth runs and the ablation), with its file."""
    parts = []
    for path in [*runs.bundled_files(), *sorted(ABLATION.glob("*.csv"))]:
        df = pd.read_csv(path, dtype={"key": str, "settings": str, "masks_fp": str, "init_fp": str})
        parts.append(df.assign(file=Path(path).name))
    return pd.concat(parts, ignore_index=True)


def _name(row) -> str:
    return (f"{row['file']}: {row['dataset']} {row['split']} {row['backbone']}-{row['layers']} "
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
    from dropedge_core.training import _seeding as seeding
    from dropedge_core.training import trainer

    original = seeding.build_model

    def other_init(config, g, device):
        model = original(config, g, device)
        with torch.no_grad():
            next(model.parameters()).mul_(1.0 + 1e-6)
        return model

    monkeypatch.setattr(trainer, "build_model", other_init)
    from dropedge_core.training import _fingerprint as fp_module

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


def test_init_digest_sees_one_changed_weight():
    model = torch.nn.Linear(3, 2)
    before = init_digest(model)
    with torch.no_grad():
        model.weight[0, 0] += 1e-7
    assert init_digest(model) != before


def test_the_fingerprint_is_the_trainers_first_masks_and_weights():
    """Against the trainer itself: the masks its first epochs train on (recorded through the
    sampler) and its model's weights before the first step."""
    from dropedge_core.training import trainer

    config = TrainConfig(dataset="karate", backbone="gcn", num_layers=6, sampler="dropedge++", seed=3,
                         epochs=3, patience=0, diag_every=0)
    seen = []
    original = samplers.EdgeSampler.sample

    def record(self, graph, num_layers, generator=None):
        masks = original(self, graph, num_layers, generator=generator)
        seen.append(masks.clone())
        return masks

    init = {}
    from dropedge_core.training import _seeding as seeding

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
