"""Cached re-fusion per query, and a whole `tune` grid, on a BEIR folder.

Part 1 (in-process): both sides retrieve every query once (``retrieve_sides``),
then each fusion re-fuses every query's cached runs; the peer, timed in the same
run, is the hybrid retriever's own search (both sides + fusion) per query.
Medians of ``--repeat`` passes.

Part 2 (as a user runs it): wall time of ``retrieval-eval tune`` with a
100-point grid, against ``retrieval-eval beir --retriever hybrid`` (one setting,
retrieval included) in the same run, both with a warm embedding cache.

    .venv/bin/python bench/bench_fusion.py DIR --cache-dir DIR [--repeat 5]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

from retrieval_eval.load.beir import load_beir
from retrieval_eval.retrieval.builtin.hybrid import fuse
from retrieval_eval.retrieval.config import DenseConfig, HybridConfig, RetrieversConfig
from retrieval_eval.retrieval.defaults import resolve_defaults
from retrieval_eval.retrieval.registry import build_hybrid, hybrid_sides
from retrieval_eval.retrieval.timed import QuerySpec
from retrieval_eval.retrieval.tune.cached_runs import retrieve_sides

CLI = Path(sys.executable).parent / "retrieval-eval"
FUSIONS = {
    "rrf": HybridConfig(fusion="rrf"),
    "convex min-max": HybridConfig(fusion="convex", normalisation="min-max"),
    "convex z-score": HybridConfig(fusion="convex", normalisation="z-score"),
    "convex theoretical-min": HybridConfig(fusion="convex", normalisation="theoretical-min"),
    "convex theoretical": HybridConfig(fusion="convex", normalisation="theoretical"),
    "dbsf": HybridConfig(fusion="dbsf"),
}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("directory", type=Path)
    parser.add_argument("--cache-dir", type=Path, required=True)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()

    data = load_beir(args.directory)
    queries = [QuerySpec(qid, text) for qid, text in data.queries.items()]
    config = resolve_defaults(
        RetrieversConfig(dense=DenseConfig(cache_dir=args.cache_dir)), home=Path.home(), cores=2
    )
    sides = hybrid_sides(config)
    for retriever in sides.values():
        retriever.index(data.corpus)
    cached = retrieve_sides(sides, queries, 100)
    hybrid = build_hybrid(config, sides)
    hybrid.search(queries[0].text, 10)  # warm-up

    searches = []
    for _ in range(args.repeat):
        started = time.perf_counter()
        for query in queries:
            hybrid.search(query.text, 10)
        searches.append((time.perf_counter() - started) * 1000 / len(queries))
    search_ms = statistics.median(searches)
    print(f"hybrid search (peer): {search_ms:.3f} ms/query")
    for name, fusion in FUSIONS.items():
        passes = []
        for _ in range(args.repeat):
            started = time.perf_counter()
            for query in queries:
                per_side = {side: runs[query.query_id] for side, runs in cached.runs.items()}
                bounds = {side: runs[query.query_id] for side, runs in cached.ceilings.items()}
                fuse(fusion, per_side, bounds)
            passes.append((time.perf_counter() - started) * 1000 / len(queries))
        fused_ms = statistics.median(passes)
        print(f"re-fusion {name}: {fused_ms:.3f} ms/query ({fused_ms / search_ms:.3f}× search)")

    grid = ["--param", "fusion=convex", "--param", "alpha=0:0.99:0.01"]  # 100 points
    tunes, beirs, grids = [], [], []
    for _ in range(max(1, args.repeat // 2)):
        started = time.perf_counter()
        done = subprocess.run(
            [str(CLI), "tune", str(args.directory), *grid, "--cache-dir", str(args.cache_dir)],
            check=True,
            capture_output=True,
            text=True,
        )
        tunes.append(time.perf_counter() - started)
        # tune's own account of its parts: "retrieved once: ...", "grid: ... s for ..."
        grids.extend(
            line for line in done.stdout.splitlines() if line.startswith(("retrieved", "grid:"))
        )
        started = time.perf_counter()
        subprocess.run(
            [
                str(CLI),
                "beir",
                str(args.directory),
                "--retriever",
                "hybrid",
                "--cache-dir",
                str(args.cache_dir),
            ],
            check=True,
            capture_output=True,
        )
        beirs.append(time.perf_counter() - started)
    tune_s, beir_s = statistics.median(tunes), statistics.median(beirs)
    print("\n".join(grids))
    print(
        f"tune, 100 points: {tune_s:.1f} s; beir hybrid (peer): {beir_s:.1f} s; "
        f"ratio {tune_s / beir_s:.2f}×"
    )


if __name__ == "__main__":
    main()
