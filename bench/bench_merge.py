"""Metrics and the shard merge at 100k queries: `run --shard`, `merge`, and one unsharded `run`.

A project with ``--queries`` fixtures (one relevant document each) over a corpus of
``--documents`` one-line documents is scored with the `run-file` retriever from a TREC
run of 10 results per query (the relevant one at a seeded rank, or missing), so the
time is retrieval-eval's own: reading fixtures and the run, the measures, the bootstrap
confidence intervals, the gate and the report. Each command is a fresh process through
the console script, as in a workflow; the peer is the unsharded `run` in the same
invocation. Times are CPU seconds (user + system) of each process, medians of
``--repeats``.

    .venv/bin/python bench/bench_merge.py --queries 100000 --shards 4 --repeats 3
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

CONSOLE_SCRIPT = Path(sys.executable).parent / "retrieval-eval"


def build_project(root: Path, queries: int, documents: int, seed: int) -> None:
    rng = random.Random(seed)
    (root / "datasets").mkdir(parents=True)
    with (root / "corpus.jsonl").open("w", encoding="utf-8") as out:
        for number in range(documents):
            out.write(
                json.dumps({"id": f"d{number}", "title": "", "text": f"document {number}"}) + "\n"
            )
    with (
        (root / "datasets" / "semantic.jsonl").open("w", encoding="utf-8") as fixtures,
        (root / "run.trec").open("w", encoding="utf-8") as run,
    ):
        for number in range(queries):
            relevant = f"d{rng.randrange(documents)}"
            fixtures.write(
                json.dumps(
                    {
                        "query_id": f"q{number}",
                        "query": f"query number {number}",
                        "retrieval_type": "semantic",
                        "expected_top_k_ids": [relevant],
                        "ground_truth_source": "synthetic",
                    }
                )
                + "\n"
            )
            hits = [f"d{rng.randrange(documents)}" for _ in range(10)]
            position = rng.randrange(12)  # 10 or 11: the relevant one is not retrieved
            if position < 10 and relevant not in hits:
                hits[position] = relevant
            for rank, doc in enumerate(dict.fromkeys(hits), start=1):
                run.write(f"q{number} Q0 {doc} {rank} {1.0 / rank:.6f} bench\n")
    (root / "retrieval-eval.toml").write_text(
        'corpus = "corpus.jsonl"\nmin_human = 0\n'
        '[dataset_retrievers]\n"semantic.jsonl" = "run-file"\n'
        '[retrievers.run-file]\npath = "run.trec"\n'
        '[thresholds]\n"mrr@10" = false\n"ndcg@10" = false\n"p@5" = false\n'
        '"latency_p95_ms" = false\n',
        encoding="utf-8",
    )


_TIMINGS = {"duration_s", "setup_s", "latency", "latency_ms"}


def without_timings(value: object) -> object:
    """The report with its wall-clock fields removed: what must be identical."""
    if isinstance(value, dict):
        if str(value.get("metric", "")).startswith("latency"):
            return None
        return {k: without_timings(v) for k, v in value.items() if k not in _TIMINGS}
    if isinstance(value, list):
        return [without_timings(v) for v in value]
    return value


def timed(*args: str, cwd: Path) -> float:
    """CPU seconds (user + system) of one console-script process: on a shared, loaded
    machine wall time says more about the neighbours than about the command."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    completed = subprocess.run(
        [str(CONSOLE_SCRIPT), *args], cwd=cwd, capture_output=True, text=True, check=False
    )
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if completed.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(args)} exited {completed.returncode}:\n{completed.stderr}")
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=100_000)
    parser.add_argument("--documents", type=int, default=10_000)
    parser.add_argument("--shards", type=int, default=4)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-merge-") as folder:
        root = Path(folder)
        build_project(root, args.queries, args.documents, args.seed)
        # The first run establishes the baseline; every measured run then compares with it.
        timed("run", "--quiet", "--report-dir", "establish", cwd=root)
        rows: dict[str, list[float]] = {"run": [], "shard": [], "merge": []}
        for repeat in range(args.repeats):
            rows["run"].append(timed("run", "--quiet", "--report-dir", f"full{repeat}", cwd=root))
            shards = [
                timed(
                    "run",
                    "--quiet",
                    "--shard",
                    f"{i}/{args.shards}",
                    "--report-dir",
                    f"r{repeat}-p{i}",
                    cwd=root,
                )
                for i in range(1, args.shards + 1)
            ]
            rows["shard"].append(max(shards))
            rows["merge"].append(
                timed(
                    "merge",
                    "--quiet",
                    "--report-dir",
                    f"merged{repeat}",
                    *[f"r{repeat}-p{i}" for i in range(1, args.shards + 1)],
                    cwd=root,
                )
            )
            full = json.loads((root / f"full{repeat}" / "report.json").read_text())
            merged = json.loads((root / f"merged{repeat}" / "report.json").read_text())
            same = without_timings(full) == without_timings(merged)
            print(
                f"repeat {repeat}: {json.dumps({k: v[-1] for k, v in rows.items()})}"
                f" datasets identical: {same}",
                flush=True,
            )
        medians = {name: statistics.median(values) for name, values in rows.items()}
        print(f"\n{args.queries:,} queries, {args.shards} shards, medians of {args.repeats}:")
        print("| step | CPU seconds | vs unsharded run |")
        print("| --- | ---: | ---: |")
        print(f"| unsharded `run` (peer) | {medians['run']:.2f} | 1.00× |")
        slowest, ratio = medians["shard"], medians["shard"] / medians["run"]
        print(f"| slowest `run --shard i/{args.shards}` | {slowest:.2f} | {ratio:.2f}× |")
        print(f"| `merge` | {medians['merge']:.2f} | {medians['merge'] / medians['run']:.2f}× |")


if __name__ == "__main__":
    main()
