"""The subcommands: parse -> one study -> print (a table, or JSON with ``--json``)."""
from __future__ import annotations

import argparse
import itertools
import json
import sys

from dropedge_core import datasets, metrics, samplers
from dropedge_core.echo import bounded

from dropedge_explorer import databases, memory, paths
from dropedge_explorer.cli._common import (
    MAX_RUNS,
    MAX_SOURCES,
    CLIError,
    check_distinct_seeds,
    dataset_of,
    graph_of,
    load_dataset,
    make_config,
    pct,
    print_json,
    progress_bar,
    recipe_of,
    train_runs,
    upload_summary,
    warn_preset_depth,
)
from dropedge_explorer.studies import sampling
from dropedge_explorer.studies._stopping import stop_on_signals
from dropedge_explorer.studies.cells import mean_std
from dropedge_explorer.studies.sweep import SweepOutcome, run_claimed, summarize_runs
from dropedge_explorer.training import (
    MAX_SEED,
    UPLOAD_DATASET,
    TrainConfig,
    check_memory,
    check_trainable,
)
from dropedge_explorer.training.checks import seeds_per_batch
from dropedge_explorer.training.seed_batch import check_batchable


def cmd_datasets(args: argparse.Namespace) -> int:
    problem = datasets.data_dir_problem()
    if problem:
        sys.stderr.write(f"warning: {problem}; datasets not cached need a download\n")
    rows = datasets.available()
    if args.json:
        print_json(rows)
        return 0
    print(f"{'name':<18}{'available from':<16}{'offline':<9}splits")
    for r in rows:
        print(f"{r['name']:<18}{r['availability']:<16}{'yes' if r['offline'] else 'no':<9}{r['splits']}")
    print("(download = needs the internet; set DROPEDGE_DATA to a folder with PyG's raw layout)")
    return 0


def cmd_train(args: argparse.Namespace) -> int:
    check_distinct_seeds(args.seeds)
    dataset = dataset_of(args)
    configs = [make_config(args, dataset, args.backbone, num_layers=args.layers,
                           sampler=args.sampler, seed=seed) for seed in args.seeds]
    warn_preset_depth(configs)
    if args.batch_seeds:  # refused before the graph is loaded
        check_batchable(configs)
    if args.store and dataset == UPLOAD_DATASET:
        raise CLIError("--store keeps runs under their dataset's name, which an uploaded graph (--edges) "
                       "does not have; use --json to keep the results")
    graph = graph_of(args, dataset, configs[0].split, needs_labels=True)
    store = None
    if args.store:
        from dropedge_explorer.store import ResultStore

        store = ResultStore(args.store)
    results = train_runs(configs, graph, args, store=store)
    mean, std = mean_std([r.test_acc for r in results])
    if args.json:
        base = configs[0].to_dict()
        base.pop("seed")
        out = {"config": base, "seeds": list(args.seeds), "test_acc_mean": mean,
               "test_acc_std": std, "runs": [r.summary() for r in results],
               "store": str(store.path) if store else None}
        if dataset == UPLOAD_DATASET:
            out["upload"] = upload_summary(graph)
        print_json(out)
        return 0
    c = configs[0]
    where = f"{graph.name} (uploaded)" if dataset == UPLOAD_DATASET else c.dataset
    print(f"{where}/{c.split} {c.backbone} L={c.num_layers} sampler={c.sampler} "
          f"p_min={c.p_min:g} p_max={c.p_max:g} norm={c.normalization} hidden={c.hidden} "
          f"dropout={c.dropout:g} lr={c.lr:g} wd={c.weight_decay:g} loop={c.self_loop} "
          f"epochs={c.epochs} patience={c.patience} device={results[0].device}")
    print(f"settings: {c.settings} (recipe {c.recipe!r}; --recipe and the training flags change them)")
    if args.batch_seeds:
        print("seeds trained in one batch (--batch-seeds): a seed's times are its share of the batch's")
    for r in results:
        print(f"  seed {r.config.seed}: test {pct(r.test_acc)} (best val {pct(r.best_val_acc)} at "
              f"epoch {r.best_epoch}; {r.epochs_run} epochs, {r.total_time:.1f} s, "
              f"{(r.mean_epoch_time or 0):.4f} s/epoch) [{r.reason}]")
        if r.reason == "nan":
            print(f"    {r.message}")
    std_txt = f" ± {100 * std:.1f}" if std is not None else ""
    print(f"mean test accuracy: {pct(mean)}{std_txt} over {len(results)} seed(s)")
    if store:
        print(f"stored in {store.path}")
    return 0


def cmd_men(args: argparse.Namespace) -> int:
    if not 1 <= args.runs <= MAX_RUNS:
        raise CLIError(f"--runs must be an integer in 1..{MAX_RUNS} (got {args.runs})")
    if not 1 <= args.sources <= MAX_SOURCES:
        raise CLIError(f"--sources must be an integer in 1..{MAX_SOURCES} (got {args.sources})")
    if not 0 <= args.seed <= MAX_SEED:
        raise CLIError(f"--seed must be an integer in 0..{MAX_SEED} (got {args.seed})")
    for layers in args.layers:
        samplers.check_layers(layers)
    made = [samplers.make(name, p_min=args.p_min, p_max=args.p_max, p=args.p, kernel=args.kernel,
                          directed=args.directed) for name in args.samplers]
    dataset = dataset_of(args)
    graph = graph_of(args, dataset, args.split)
    if not args.estimate and graph.num_nodes > metrics.EXACT_ALLOWED_MAX_NODES:
        raise CLIError(f"{graph.name} has {graph.num_nodes} nodes > {metrics.EXACT_ALLOWED_MAX_NODES}: "
                       "exact MEN needs an N x N matrix; add --estimate")
    sources = min(args.sources, graph.num_nodes) if args.estimate else graph.num_nodes
    memory.check(memory.men_bytes(graph.num_nodes, graph.num_edges, max(args.layers), sources),
                 f"MEN at L={max(args.layers)} on {graph.name} (N={graph.num_nodes}, M={graph.num_edges})",
                 "use fewer layers, fewer --sources or a smaller graph")
    bar = progress_bar(len(made) * len(args.layers) * args.runs, "MEN", args)
    try:
        runs = sampling.men_runs(graph, args.samplers, args.layers, args.runs, args.p_min, args.p_max,
                                 seed=args.seed, kernel=args.kernel, p=args.p, directed=args.directed,
                                 num_sources=args.sources if args.estimate else 0,
                                 on_sample=lambda: bar.update(1))
    finally:
        bar.close()
    summary = sampling.men_summary(runs, curves=True)
    rows = [{"sampler": r.sampler, "layers": int(r.layers), "men_mean": r.men_mean, "men_std": r.men_std,
             "runs": int(r.runs), "edge_numbers_mean": r.edge_numbers_mean,
             "edge_numbers_std": r.edge_numbers_std, "estimate": bool(args.estimate),
             **({"men_stderr_mean": r.men_stderr_mean} if args.estimate else {})}
            for r in summary.itertuples()]
    if args.json:
        out = {"dataset": graph.name, "num_nodes": graph.num_nodes, "num_edges": graph.num_edges,
               "p_min": args.p_min, "p_max": args.p_max, "rows": rows}
        if dataset == UPLOAD_DATASET:
            out["upload"] = upload_summary(graph)
        print_json(out)
        return 0
    print(f"MEN on {graph.name} (N={graph.num_nodes}, M={graph.num_edges}), p_min={args.p_min:g}, "
          f"p_max={args.p_max:g}, {args.runs} runs{' (estimated)' if args.estimate else ''}")
    print(f"{'sampler':<12}{'layers':>7}{'MEN mean':>14}{'std':>12}")
    for r in rows:
        print(f"{r['sampler']:<12}{r['layers']:>7}{r['men_mean']:>14.4g}{r['men_std']:>12.3g}")
    return 0


def sweep_grid(args: argparse.Namespace) -> list[TrainConfig]:
    """Every (dataset, backbone, depth, sampler, seed) of a ``sweep``. Without ``--layers``
    the depths are 2 4 8, or with the paper or authors recipe each preset's own depth (the
    paper's best-per-backbone table)."""
    # None = keep the preset's depth (make_config ignores None grid values)
    depths = args.layers or ([None] if recipe_of(args) in ("paper", "authors") else [2, 4, 8])
    return [make_config(args, dataset, backbone, num_layers=layers, sampler=sampler, seed=seed)
            for dataset, backbone, layers, sampler, seed in itertools.product(
                args.datasets, args.backbones, depths, args.samplers, args.seeds)]


def _check_sweep_batches(grid: list[TrainConfig], graphs: dict) -> None:
    """``sweep --batch-seeds``: refuse what a batch cannot train (the authors recipe) before
    the store is opened; say which cells the memory limit splits into smaller batches."""
    from dropedge_explorer.studies.sweep import cell_of

    cells: dict[str, list[TrainConfig]] = {}
    for c in grid:
        cells.setdefault(cell_of(c), []).append(c)
    for seeds in cells.values():
        check_batchable(seeds[:1])
        size = seeds_per_batch(seeds[0], graphs[(seeds[0].dataset, seeds[0].split)], len(seeds))
        if size < len(seeds):
            c = seeds[0]
            sys.stderr.write(f"note: the memory limit holds {size} of the {len(seeds)} seeds of {c.dataset} "
                             f"{c.backbone} L={c.num_layers} {c.sampler} at once; training them in "
                             f"{-(-len(seeds) // size)} batches\n")


def cmd_sweep(args: argparse.Namespace) -> int:
    from dropedge_explorer.store import ResultStore, run_key
    from dropedge_explorer.sweep_workers import ClaimedRuns, check_lease

    lease = check_lease(args.lease)
    check_distinct_seeds(args.seeds)
    grid = sweep_grid(args)  # every setting checked before the store is opened (nothing written)
    if not grid:
        raise CLIError("the sweep grid is empty")
    graphs = {}
    for c in grid:  # load (and fail on) every dataset before the first run
        if (c.dataset, c.split) not in graphs:
            graphs[(c.dataset, c.split)] = load_dataset(c.dataset, c.split)
    for c in grid:  # refuse a too-big run before the first one trains (a batch is split to fit)
        check_memory(c, graphs[(c.dataset, c.split)])
    if args.batch_seeds:
        _check_sweep_batches(grid, graphs)
    store = ResultStore(args.store)
    # claimed one at a time (with --batch-seeds a cell's free seeds at once): sweeps started
    # on one store (here or on other machines) split the grid, and a run stored by anyone
    # (before, or meanwhile) is not trained again
    runs = ClaimedRuns(store, grid, lease=lease)
    bar = progress_bar(runs.total, "sweep", args)
    outcome = SweepOutcome()

    def on_run(outcome: SweepOutcome) -> None:
        bar.n = runs.over
        bar.refresh()

    def on_event(event: dict) -> None:
        if event["type"] == "start":
            c = event["config"]
            seeds = ",".join(str(b.seed) for b in outcome.batch) or c["seed"]
            bar.set_postfix_str(f"{c['dataset']} {c['backbone']} L={c['num_layers']} {c['sampler']} "
                                f"seed{'s' if len(outcome.batch) > 1 else ''}={seeds}")

    try:
        run_claimed(runs, store, graphs, on_event=on_event, on_run=on_run, outcome=outcome,
                    batch_seeds=args.batch_seeds)
    finally:
        bar.close()
    ran, lost, skipped = outcome.results, outcome.lost, runs.skipped
    if lost:
        sys.stderr.write(f"note: {lost} run(s) were taken over by another worker; not stored here\n")
    table = summarize_runs(store.to_frame(), keys={run_key(c) for c in grid})
    if args.json:
        print_json({"store": str(store.path), "worker": runs.owner, "batch_seeds": args.batch_seeds,
                     "total": len(grid), "distinct": runs.total, "skipped": skipped, "ran": len(ran),
                     "ran_keys": runs.trained_keys, "taken_over_from_here": lost,
                     "not_finite": [r.config.to_dict() for r in ran if r.reason == "nan"],
                     "results": json.loads(table.to_json(orient="records"))})
        return 0
    print(f"sweep: {runs.total} runs, {skipped} stored before or by other workers, {len(ran)} trained "
          f"here{' (the seeds of a cell in one batch)' if args.batch_seeds else ''} -> {store.path}")
    print(f"{'dataset':<10}{'backbone':<9}{'L':>4}  {'sampler':<12}{'runs':>5}{'test acc':>16}")
    for r in json.loads(table.to_json(orient="records")):
        std = "" if r["test_acc_std"] is None else f" ± {100 * r['test_acc_std']:.1f}"
        print(f"{r['dataset']:<10}{r['backbone']:<9}{r['num_layers']:>4}  {r['sampler']:<12}"
              f"{r['runs']:>5}{pct(r['test_acc_mean']):>9}{std}")
    return 0


def _check_trials(trials: int, most: int) -> None:
    """``--trials`` in ``1..most`` (:data:`dropedge_explorer.studies.tuning.MAX_TRIALS`, passed in:
    the tuning module loads Optuna, so only the commands that tune import it)."""
    if not 1 <= trials <= most:
        raise CLIError(f"--trials must be an integer in 1..{most} (got {bounded(trials, quote=False)})")


def cmd_tune(args: argparse.Namespace) -> int:
    from dropedge_explorer.studies import tuning

    if len(args.seeds) != 1:
        raise CLIError(f"tune takes one --seeds value (got {args.seeds})")
    _check_trials(args.trials, tuning.MAX_TRIALS)
    tuning.check_storage(args.storage)  # before any work: a storage that cannot be used is one line
    dataset = dataset_of(args)
    base = make_config(args, dataset, args.backbone, num_layers=args.layers,
                       sampler=args.sampler, seed=args.seeds[0])
    graph = graph_of(args, dataset, base.split, needs_labels=True)
    check_trainable(base, graph)  # one class, above the memory limit: refused before any trial
    space = tuning.SearchSpace.for_sampler(base.sampler, args.tune_extra)
    if args.study is None:
        args.study = tuning.default_study_name(base, space, args.search, graph)
    elif not args.study.strip() or len(args.study) > 200:
        raise CLIError(f"--study must be a name of 1..200 characters (got {bounded(args.study)})")
    bar = progress_bar(args.trials, f"tune {args.study}", args)

    def on_trial(study, trial) -> None:
        bar.update(1)
        best = tuning.best_summary(study)
        if best:
            bar.set_postfix(best_val=f"{best['val_acc']:.3f}", refresh=False)

    try:
        with stop_on_signals() as stop:
            study = tuning.tune(base, args.trials, args.study, storage=args.storage, search=args.search,
                                seed=None, space=space, graph=graph, pruner=not args.no_pruning,
                                callbacks=[on_trial], stop_event=stop)
            stop.check()  # a signal between trials: the study stopped early
    finally:
        bar.close()
    best = tuning.best_summary(study)
    frame = tuning.trials_frame(study)
    if args.json:
        print_json({"study": args.study, "storage": databases.display(tuning.storage_url(args.storage)),
                     "best": best, "trials": frame.to_dict(orient="records")})
        return 0
    counts = frame.state.value_counts().to_dict()
    print(f"study {args.study!r} in {databases.display(tuning.storage_url(args.storage))}: "
          + ", ".join(f"{n} {state.lower()}" for state, n in counts.items()))
    if best is None:
        print("no finished trial yet")
        return 0
    if best["p_min"] is not None:
        keep = f"p_min={best['p_min']:.3f}, p_max={best['p_max']:.3f} (p_max'={best['p_max_prime']:.3f})"
    else:
        keep = f"p={best['p']:.3f}" if best["p"] is not None else "no keep rates"
    print(f"best trial #{best['trial']}: val {pct(best['val_acc'])}, test {pct(best['test_acc'])} at {keep}"
          + "".join(f", {k}={best[k]:.3g}" for k in tuning.OPTIONAL_PARAMS if k in best))
    return 0


def cmd_search(args: argparse.Namespace) -> int:
    from dropedge_explorer.store import ResultStore
    from dropedge_explorer.studies import cell_search, tuning

    _check_trials(args.trials, tuning.MAX_TRIALS)
    check_distinct_seeds(args.best_seeds, "--best-seeds")
    for seed in args.best_seeds:
        if not 0 <= seed <= MAX_SEED:
            raise CLIError(f"--best-seeds must be in 0..{MAX_SEED} (got {seed})")
    bases = [cell_search.cell_base(args.dataset, args.split, args.backbone, layers, sampler, args.recipe)
             for layers in args.layers for sampler in args.samplers]  # every cell checked before any work
    storage = tuning.check_storage(args.storage)  # before any work
    if databases.same_place(storage, args.store or paths.results_store()):  # before either is written
        raise CLIError(f"--store and --storage name one database ({databases.display(storage)}): the "
                       "results store and the Optuna storage need one each")
    store = ResultStore(args.store)
    graph = load_dataset(bases[0].dataset, bases[0].split)
    rows = []
    with stop_on_signals() as stop:
        for base in bases:
            rows.append(_search_one(args, base, storage, store, graph, stop))
    if args.json:
        print_json({"dataset": bases[0].dataset, "split": bases[0].split, "backbone": bases[0].backbone,
                     "storage": databases.display(tuning.storage_url(storage)), "store": str(store.path),
                     "cells": rows})
    return 0


def _search_one(args: argparse.Namespace, base, storage: str, store, graph, stop) -> dict:
    """One cell of ``search``: its study to the budget, its best point on every seed."""
    from dropedge_explorer.studies import cell_search

    bar = progress_bar(args.trials, f"search {cell_search.study_name(base)}", args)
    try:
        study = cell_search.search_cell(base, args.trials, storage, graph=graph, stop_event=stop,
                                        callbacks=[lambda study, trial, bar=bar: bar.update(1)])
    finally:
        bar.close()
    best = cell_search.best_config(study, base)
    if best is None:
        return {"num_layers": base.num_layers, "sampler": base.sampler, "best_val_acc": None}
    trained: list[str] = []
    runs = cell_search.run_best(best, args.best_seeds, store, graph=graph, stop_event=stop, trained=trained,
                                batch_seeds=args.batch_seeds)
    mean, std = mean_std([r["test_acc"] for r in runs])
    if not args.json:
        print(f"L={base.num_layers:<3} {base.sampler:<11} best val {pct(study.best_value)}  "
              f"test {pct(mean)} ± {100 * (std or 0):.1f} over {len(runs)} seeds  {best.settings}",
              flush=True)
    return {"num_layers": base.num_layers, "sampler": base.sampler,
            "trials": cell_search.trials_done(study), "best_val_acc": study.best_value,
            "settings": best.settings, "p_min": best.p_min, "p_max": best.p_max, "p": best.p,
            "seeds": len(runs), "trained_here": len(trained), "test_acc_mean": mean, "test_acc_std": std}
