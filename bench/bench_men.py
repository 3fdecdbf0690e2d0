"""Benchmark: exact MEN on Cora and the MEN estimate on a 50k-node graph (issue 7, target 3).

Targets: exact MEN at 16 layers for LI, LID, LDD and DropEdge on Cora in under 2 s
together; the estimate on a 50k-node CSBM graph at 16 layers in under 20 s with a
relative standard error under 3%.

    python bench/bench_men.py [--layers 16] [--sources 512]
    python bench/bench_men.py --million [--sources 512]

``--million`` instead records the estimate on issue 13's 1M-node CSBM (~10.8M edges),
DropEdge++ keep 0.3 -> 0.8, L = 16: its time and relative standard error (no target).
"""
from __future__ import annotations

import argparse
import time

import torch
from dropedge_core import datasets, metrics, samplers


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--layers", type=int, default=16)
    ap.add_argument("--sources", type=int, default=4096)
    ap.add_argument("--nodes", type=int, default=50_000)
    ap.add_argument("--million", action="store_true", help="the 1M-node graph of issue 13 only")
    args = ap.parse_args(argv)
    if args.million:
        return million(args.layers, args.sources)
    ok = True

    cora = datasets.load("cora")
    gen = torch.Generator().manual_seed(0)
    masks = {name: samplers.make(name, p_min=0.05, p_max=1.0).sample(cora, args.layers, gen)
             for name in ("li", "lid", "ldd", "dropedge")}
    t = time.perf_counter()
    values = {name: metrics.men(cora, m) for name, m in masks.items()}
    exact_s = time.perf_counter() - t
    ok &= exact_s < 2.0
    print(f"exact MEN, Cora, L={args.layers}, 4 samplers: {exact_s:.2f} s "
          f"({'PASS' if exact_s < 2.0 else 'FAIL'}, target < 2 s)  "
          + ", ".join(f"{k}={v:.3g}" for k, v in values.items()))

    big = datasets.csbm(num_nodes=args.nodes, num_classes=5, p_intra=2e-4, p_inter=2e-5, seed=0)
    masks = samplers.make("lid", p_min=0.05, p_max=1.0).sample(big, args.layers, gen)
    t = time.perf_counter()
    est = metrics.men_estimate(big, masks, num_sources=args.sources, generator=gen)
    est_s = time.perf_counter() - t
    rel = est.stderr / est.value
    good = est_s < 20.0 and rel < 0.03
    ok &= good
    print(f"estimated MEN, CSBM N={big.num_nodes} M={big.num_edges}, L={args.layers}, "
          f"{est.sources} sources: {est.value:.4g} ± {est.stderr:.2g} (rel. SE {rel:.2%}) in "
          f"{est_s:.2f} s ({'PASS' if good else 'FAIL'}, targets < 20 s and < 3%)")
    print("verdict:", "all targets met" if ok else "some targets missed")
    return 0 if ok else 1


def million(num_layers: int, num_sources: int) -> int:
    torch.set_num_threads(1)
    graph = datasets.csbm(num_nodes=1_000_000, num_classes=3, p_intra=5.5e-5, p_inter=5e-6,
                          num_features=60)
    gen = torch.Generator().manual_seed(0)
    masks = samplers.make("dropedge++", p_min=0.3, p_max=0.8).sample(graph, num_layers, gen)
    t = time.perf_counter()
    est = metrics.men_estimate(graph, masks, num_sources=num_sources, generator=gen)
    est_s = time.perf_counter() - t
    print(f"estimated MEN, CSBM N={graph.num_nodes:,} M={graph.num_edges:,}, DropEdge++ 0.3 -> 0.8, "
          f"L={num_layers}, {est.sources} sources, 1 torch thread: {est.value:.4g} ± {est.stderr:.2g} "
          f"(rel. SE {est.stderr / est.value:.2%}) in {est_s:.1f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
