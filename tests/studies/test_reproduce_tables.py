"""The tables ``reproduce`` regenerates: their runs are the bundled files' runs (one key for a
run made by ``sweep``, the Depth study or ``reproduce``), and the missing runs of a cell go
together."""
from __future__ import annotations

import dataclasses
import itertools

import pytest

from dropedge_explorer.store import run_key
from dropedge_explorer.studies import reproduce as rep
from dropedge_explorer.studies import run_tables as runs


@pytest.mark.parametrize("name", [n for n, t in rep.TABLES.items() if rep.bundled_path(t).is_file()])
def test_every_bundled_run_of_a_table_is_one_of_its_configs(name):
    """The bundled rows were made by ``sweep`` and the app before this module existed: each
    of today's stream is one of the table's configs, at its depth, sampler and seed."""
    table = rep.TABLES[name]
    rows = runs.current(rep.bundled_runs(table))
    configs = rep.table_configs(table, seeds=int(rows["seed"].max()) + 1)
    by_key = {run_key(c): (c.backbone, c.num_layers, c.sampler, c.seed) for c in configs}
    assert len(rows) and set(rows["key"]) <= set(by_key)
    for row in rows.itertuples():
        assert by_key[row.key] == (row.backbone, row.layers, row.sampler, row.seed)


def test_the_missing_runs_are_grouped_by_cell_shallow_first():
    configs = rep.table_configs(rep.TABLES["gcn-semi-cora"], seeds=3, layers=[2, 8])
    present = {run_key(c) for c in configs if (c.num_layers, c.sampler, c.seed) in
               {(2, "nodrop", 0), (2, "nodrop", 2), (8, "dropedge", 1)}}
    cells = rep.missing_cells(configs, present)
    got = [(c[0].num_layers, c[0].sampler, [x.seed for x in c]) for c in cells]
    expected = []  # by hand: every (depth, sampler) with the seeds not present
    for L, s in itertools.product([2, 8], ["nodrop", "dropedge", "dropedge++"]):
        seeds = [seed for seed in range(3) if (L, s, seed) not in
                 {(2, "nodrop", 0), (2, "nodrop", 2), (8, "dropedge", 1)}]
        expected.append((L, s, seeds))
    assert sorted(got) == sorted(expected)
    assert [g[0] for g in got] == sorted(g[0] for g in got)  # shallow cells first
    assert all(len({run_key(dataclasses.replace(x, seed=0)) for x in c}) == 1 for c in cells)


def test_a_table_has_the_papers_depths():
    assert rep.table_layers(rep.TABLES["gcn-semi-cora"]) == [2, 4, 8, 16, 32, 64]
    with pytest.raises(ValueError, match="--layers 3 5: not a depth"):
        rep.table_configs(rep.TABLES["gcn-semi-cora"], layers=[3, 5, 8])


def test_what_an_empty_table_lacks_and_its_gpu_estimate(tmp_path):
    """No bundled runs: every cell lacks 10 seeds, each run taking its recipe's budget (200
    epochs up to 8 layers, 300 at 16, 400 beyond) at 0.03 s per epoch for 32 layers."""
    plan = rep.remaining_gpu_plan(rep.TABLES["gcn-full-cora"], 10, directory=tmp_path)
    budget = {2: 200, 4: 200, 8: 200, 16: 300, 32: 400, 64: 400}
    assert int(plan["seeds"].sum()) == 6 * 3 * 10
    assert float(plan["seconds"].sum()) == pytest.approx(
        sum(3 * 10 * epochs * 0.03 * layers / 32 for layers, epochs in budget.items()))
