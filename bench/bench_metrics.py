"""Metrics engine speed: ours against pytrec_eval and ranx, measured in the same run.

    .venv/bin/python bench/bench_metrics.py                    # 1k, 10k, 100k (+ peers)
    .venv/bin/python bench/bench_metrics.py --sizes 1000000 --peers-up-to 0   # 1M, ours only

Each size is also run with the run file's lines shuffled (``ours-shuffled``), as runs
concatenated from shards are, in the same invocation as the sorted file.

Synthetic data (bench_metrics_data.py) is written once to .bench-data/ (git-ignored):
N queries x 100 results, graded qrels with 1-9 relevant per query. Every
measurement runs in a fresh child process, so peak memory (ru_maxrss) belongs to
that measurement alone and numba's cache is cold when we want it cold; the table
reports the median over --repeats children. Measures: NDCG@10, MRR@10
(pytrec_eval: recip_rank, it has no cut-off MRR), P@5, Recall@100, MAP. From files,
ours is `retrieval-eval trec`'s own code (score_trec_run, with recip_rank as well): a
run in trec order is streamed in pieces, a shuffled one read whole.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
DATA = HERE.parent / ".bench-data"
OURS = ["ndcg@10", "mrr@10", "p@5", "recall@100", "map"]
PYTREC = {"ndcg_cut.10", "recip_rank", "P.5", "recall.100", "map"}
# The same five as `retrieval-eval trec -m` arguments (its MRR is uncut recip_rank, as
# pytrec_eval's).
TREC_MEASURES = ("ndcg_cut.10", "recip_rank", "P.5", "recall.100", "map")
RANX = ["ndcg@10", "mrr@10", "precision@5", "recall@100", "map"]


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def _files(queries: int) -> tuple[Path, Path]:
    sys.path.insert(0, str(HERE))
    from bench_metrics_data import generate

    return generate(DATA, queries)


def child_ours_files(queries: int, *, shuffle: bool = False) -> dict[str, float]:
    """End to end from TREC files as `retrieval-eval trec` scores them (score_trec_run: a
    run in trec order is streamed, a shuffled one read whole): parse both, rank, measure."""
    qrels_path, run_path = _files(queries)
    if shuffle:
        from bench_metrics_data import shuffled

        run_path = shuffled(run_path)
    from retrieval_eval.tools.trec.report import score_trec_run

    baseline = _peak_mb()
    start, cpu_start = time.perf_counter(), time.process_time()
    result = score_trec_run(qrels_path, run_path, TREC_MEASURES)
    means = dict(result.summary)
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu_start
    return {
        "seconds": seconds,
        "cpu_seconds": cpu,
        "peak_mb": _peak_mb(),
        "baseline_mb": baseline,
        **means,
    }


def _pytrec_dicts(queries: int) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]]:
    import pytrec_eval

    qrels_path, run_path = _files(queries)
    with qrels_path.open() as handle:
        qrels = pytrec_eval.parse_qrel(handle)
    with run_path.open() as handle:
        run = pytrec_eval.parse_run(handle)
    return qrels, run


def child_ours_memory(queries: int) -> dict[str, float]:
    """score_queries() on Python mappings: the call a run makes (rankings already ranked)."""
    qrels, run = _pytrec_dicts(queries)
    # The generator writes each query's lines in trec_eval order, and dicts keep it.
    rankings = {qid: list(docs) for qid, docs in run.items()}
    del run
    from retrieval_eval.score.query_scores import score_queries

    baseline = _peak_mb()
    start = time.perf_counter()
    results = score_queries(qrels, rankings, OURS)
    seconds = time.perf_counter() - start
    means = {name: statistics.fmean(values.values()) for name, values in results.items()}
    return {"seconds": seconds, "peak_mb": _peak_mb(), "baseline_mb": baseline, **means}


def child_pytrec(queries: int) -> dict[str, float]:
    import pytrec_eval

    qrels_path, run_path = _files(queries)
    baseline = _peak_mb()
    start, cpu_start = time.perf_counter(), time.process_time()
    with qrels_path.open() as handle:
        qrels = pytrec_eval.parse_qrel(handle)
    with run_path.open() as handle:
        run = pytrec_eval.parse_run(handle)
    parsed = time.perf_counter()
    results = pytrec_eval.RelevanceEvaluator(qrels, PYTREC).evaluate(run)
    done = time.perf_counter()
    ndcg = statistics.fmean(r["ndcg_cut_10"] for r in results.values())
    return {
        "seconds": done - start,
        "cpu_seconds": time.process_time() - cpu_start,
        "parse_seconds": parsed - start,
        "evaluate_seconds": done - parsed,
        "peak_mb": _peak_mb(),
        "baseline_mb": baseline,
        "ndcg@10": ndcg,
    }


def child_ranx(queries: int) -> dict[str, float]:
    """Build Qrels/Run from dicts, JIT-compile (cold cache), then warm single-threaded evaluate."""
    from ranx import Qrels, Run, evaluate

    def tiny() -> None:
        evaluate(Qrels({"q": {"d": 1}}), Run({"q": {"d": 1.0, "e": 0.5}}), RANX, threads=1)

    compile_start = time.perf_counter()
    tiny()  # JIT-compiles construction and metrics (cold only when numba's cache is empty)
    compiled = time.perf_counter()
    tiny()
    tiny_warm = time.perf_counter() - compiled
    qrels_dict, run_dict = _pytrec_dicts(queries)
    baseline = _peak_mb()
    start = time.perf_counter()
    qrels, run = Qrels(qrels_dict), Run(run_dict)
    built = time.perf_counter()
    warm = []
    for _ in range(3):
        begin = time.perf_counter()
        means = evaluate(qrels, run, RANX, threads=1, save_results_in_run=False)
        warm.append(time.perf_counter() - begin)
    return {
        "build_seconds": built - start,
        "compile_seconds": (compiled - compile_start) - tiny_warm,
        "seconds": statistics.median(warm),
        "peak_mb": _peak_mb(),
        "baseline_mb": baseline,
        "ndcg@10": float(means["ndcg@10"]),
    }


def child_generate(queries: int) -> dict[str, float]:
    _, run_path = _files(queries)
    from bench_metrics_data import shuffled

    shuffled(run_path)
    return {"run_mb": run_path.stat().st_size / 1e6}


CHILDREN = {
    "generate": child_generate,
    "ours-files": child_ours_files,
    "ours-shuffled": lambda queries: child_ours_files(queries, shuffle=True),
    "ours-memory": child_ours_memory,
    "pytrec": child_pytrec,
    "ranx": child_ranx,
}


def measure(kind: str, queries: int, repeats: int) -> dict[str, float]:
    """Median of each number over ``repeats`` fresh child processes.

    The children share one initially empty numba cache: the first compiles cold,
    so ``compile_seconds`` reports the maximum (the cold start), not the median.
    """
    return measure_alternating([kind], queries, repeats)[kind]


def measure_alternating(
    kinds: list[str], queries: int, repeats: int
) -> dict[str, dict[str, float]]:
    """Like :func:`measure` for several kinds, their children taking turns.

    Alternating (sorted, shuffled, sorted, ...) keeps a change in the machine's load
    from landing on one kind only.
    """
    runs: dict[str, list[dict[str, float]]] = {kind: [] for kind in kinds}
    with tempfile.TemporaryDirectory() as numba_cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=numba_cache, NUMBA_NUM_THREADS="1")
        for _ in range(repeats):
            for kind in kinds:
                out = subprocess.run(
                    [sys.executable, __file__, "--child", kind, str(queries)],
                    env=env,
                    capture_output=True,
                    text=True,
                    check=True,
                ).stdout
                runs[kind].append(json.loads(out.strip().splitlines()[-1]))
    summaries = {}
    for kind, done in runs.items():
        summary = {key: statistics.median(run[key] for run in done) for key in done[0]}
        if "compile_seconds" in summary:
            summary["compile_seconds"] = max(run["compile_seconds"] for run in done)
        summaries[kind] = summary
    return summaries


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000, 100_000])
    parser.add_argument("--repeats", type=int, default=5, help="children per measurement (ours)")
    parser.add_argument(
        "--peer-repeats", type=int, default=3, help="children per measurement (peers)"
    )
    parser.add_argument(
        "--peers-up-to", type=int, default=100_000, help="largest size the peers run at"
    )
    parser.add_argument(
        "--no-ranx", action="store_true", help="skip ranx (its 100k build takes minutes)"
    )
    parser.add_argument("--child", nargs=2, metavar=("KIND", "QUERIES"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(CHILDREN[args.child[0]](int(args.child[1]))))
        return
    for size in args.sizes:
        # Generate in a child too: ru_maxrss of a forked child starts at its parent's RSS.
        subprocess.run([sys.executable, __file__, "--child", "generate", str(size)], check=True)
    load_before = os.getloadavg()
    rows = []
    for size in args.sizes:
        row: dict[str, object] = {"queries": size, "run_mb": _files(size)[1].stat().st_size / 1e6}
        both = measure_alternating(["ours-files", "ours-shuffled"], size, args.repeats)
        row["ours"], row["ours_shuffled"] = both["ours-files"], both["ours-shuffled"]
        if size <= args.peers_up_to:
            row["ours_memory"] = measure("ours-memory", size, args.repeats)
            row["pytrec"] = measure("pytrec", size, args.peer_repeats)
            if not args.no_ranx:
                row["ranx"] = measure("ranx", size, args.peer_repeats)
        rows.append(row)
        print(json.dumps(row), file=sys.stderr)
    print(render(rows, args))
    print(
        f"\nLoad average (1, 5, 15 min): {load_before} at the start, {os.getloadavg()} at the end."
    )


def render(rows: list[dict[str, object]], args: argparse.Namespace) -> str:
    def f(value: float) -> str:
        return f"{value:.2f}"

    lines = [
        f"Medians of {args.repeats} runs (ours) and {args.peer_repeats} runs (peers), "
        "each in a fresh process.",
        "",
        "End to end from TREC files (parse qrels + run, rank, five measures):",
        "",
        "| queries | run file | lines | ours | pytrec_eval (parse + eval) | pytrec_eval / ours "
        "| same, CPU time |",
        "|---:|---:|---|---:|---:|---:|---:|",
    ]
    for row in rows:
        peer = row.get("pytrec")
        for label, key in (("sorted", "ours"), ("shuffled", "ours_shuffled")):
            ours = row[key]
            assert isinstance(ours, dict)
            start = (
                f"| {row['queries']:,} | {row['run_mb']:.0f} MB | {label} | {f(ours['seconds'])} s"
            )
            if isinstance(peer, dict):
                ratio = peer["seconds"] / ours["seconds"]
                split = f"({f(peer['parse_seconds'])} + {f(peer['evaluate_seconds'])})"
                cpu = peer["cpu_seconds"] / ours["cpu_seconds"]
                lines.append(
                    f"{start} | {f(peer['seconds'])} s {split} | {ratio:.1f}x | {cpu:.1f}x |"
                )
            else:
                lines.append(f"{start} | not run | | |")
    lines += [
        "",
        "Shuffled run lines (the same run, lines in random order), same invocation:",
        "",
        "| queries | sorted | shuffled | time ratio | CPU ratio | peak RSS sorted "
        "| peak RSS shuffled | memory ratio |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for row in rows:
        ours, mixed = row["ours"], row["ours_shuffled"]
        assert isinstance(ours, dict) and isinstance(mixed, dict)
        lines.append(
            f"| {row['queries']:,} | {f(ours['seconds'])} s | {f(mixed['seconds'])} s "
            f"| {mixed['seconds'] / ours['seconds']:.2f}x "
            f"| {mixed['cpu_seconds'] / ours['cpu_seconds']:.2f}x | {ours['peak_mb']:.0f} MB "
            f"| {mixed['peak_mb']:.0f} MB | {mixed['peak_mb'] / ours['peak_mb']:.2f}x |"
        )
    lines += [
        "",
        "From in-memory data (ours: `score_queries()` on ranked lists; ranx: warm, threads=1,",
        "on Qrels/Run already built):",
        "",
        "| queries | ours | ranx warm | ranx / ours | ranx build Qrels+Run | ranx JIT (cold) |",
        "|---:|---:|---:|---:|---:|---:|",
    ]
    for row in rows:
        memory, ranx = row.get("ours_memory"), row.get("ranx")
        if isinstance(memory, dict) and isinstance(ranx, dict):
            lines.append(
                f"| {row['queries']:,} | {f(memory['seconds'])} s | {f(ranx['seconds'])} s | "
                f"{ranx['seconds'] / memory['seconds']:.1f}x | {f(ranx['build_seconds'])} s | "
                f"{f(ranx['compile_seconds'])} s |"
            )
    lines += [
        "",
        "Scaling of ours, end to end from files (peak RSS of the process; 'above start'",
        "subtracts the RSS after imports):",
        "",
        "| queries | lines | seconds | s per 1M lines | peak RSS | above start | MB per 1M lines |",
        "|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for row in rows:
        ours = row["ours"]
        assert isinstance(ours, dict)
        lines_count = int(row["queries"]) * 100  # type: ignore[call-overload]
        above = ours["peak_mb"] - ours["baseline_mb"]
        lines.append(
            f"| {row['queries']:,} | {lines_count:,} | {f(ours['seconds'])} | "
            f"{ours['seconds'] / lines_count * 1e6:.2f} | {ours['peak_mb']:.0f} MB "
            f"| {above:.0f} MB | {above / lines_count * 1e6:.0f} |"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    main()
