"""Reading one huge retriever answer: streamed top-k versus parsing it whole, same run.

A command retriever answers a search with one JSON line. The peer is what a
straightforward reader does (and what retrieval-eval did): ``json.loads`` the
whole line, build every hit, then sort and cut to ``k``. retrieval-eval now
streams the ``hits`` array and keeps only the best ``k`` as it reads. Each
variant runs in a fresh process so its peak memory (max RSS) is its own.
Prints a Markdown table; the numbers go into docs/benchmarks.md.

    .venv/bin/python bench/bench_answers.py [--hits 2000000] [--runs 3]
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time

CHILD = """
import json, sys, time
from retrieval_eval.retrieval.answers import TopHits, normalise_hits
from retrieval_eval.retrieval.external.answer_reader import read_answer
from retrieval_eval.retrieval.base import Hit
path, variant = sys.argv[1], sys.argv[2]
with open(path, encoding="utf-8") as handle:
    line = handle.read()
started = time.perf_counter()
if variant == "streamed":
    top = TopHits(10, who="bench")
    read_answer(line, top.add_answer)
    result = top.result(0.0)
else:
    answer = json.loads(line)
    hits = [Hit(h["id"], h["score"], h.get("text", "")) for h in answer["hits"]]
    result = normalise_hits(hits, 10, cost_usd=0.0, who="bench")
print(json.dumps({"seconds": time.perf_counter() - started, "top": result.hits[0].doc_id,
                  "line_mb": len(line) / 1e6}))
"""


def _answer_file(count: int, folder: str) -> str:
    """The answer line, written once; each child reads it (as it would read its pipe)."""
    path = f"{folder}/answer.json"
    with open(path, "w", encoding="utf-8") as handle:
        handle.write('{"cost_usd": 0, "hits": [')
        handle.write(
            ", ".join(
                f'{{"id": "doc/{i}", "score": {(i * 7919) % 100003}.5}}' for i in range(count)
            )
        )
        handle.write("]}")
    return path


def _measure(path: str, variant: str) -> tuple[float, float, str, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    completed = subprocess.run(
        [sys.executable, "-c", CHILD, path, variant],
        capture_output=True,
        text=True,
        check=True,
    )
    peak_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    data = json.loads(completed.stdout)
    # ru_maxrss of children is the largest so far: run the big variant last, or see it stay.
    return data["seconds"], max(peak_kb, before) / 1024, data["top"], data["line_mb"]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--hits", type=int, default=2_000_000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    seconds: dict[str, list[float]] = {"streamed": [], "whole": []}
    peaks: dict[str, float] = {}
    tops = set()
    line_mb = 0.0
    started = time.perf_counter()
    # Streamed first: RUSAGE_CHILDREN's max RSS only grows, so its peak is read before the
    # peer's larger one can hide it.
    with tempfile.TemporaryDirectory() as folder:
        path = _answer_file(args.hits, folder)
        for variant in ("streamed", "whole"):
            for _ in range(args.runs):
                taken, peak, top, line_mb = _measure(path, variant)
                seconds[variant].append(taken)
                peaks[variant] = peak
                tops.add(top)
    assert len(tops) == 1, f"the variants disagree on the best hit: {tops}"
    streamed, whole = statistics.median(seconds["streamed"]), statistics.median(seconds["whole"])
    print(f"{args.hits:,} hits, one {line_mb:.0f} MB answer line, median of {args.runs} runs")
    print()
    print("| reader | seconds | peak memory (MiB, whole process) |")
    print("| --- | ---: | ---: |")
    print(f"| streamed top-k (retrieval-eval) | {streamed:.2f} | {peaks['streamed']:.0f} |")
    print(f"| json.loads, then sort (peer) | {whole:.2f} | {peaks['whole']:.0f} |")
    print()
    print(
        f"time ratio {streamed / whole:.2f}, memory ratio {peaks['streamed'] / peaks['whole']:.2f}"
        f" (bench took {time.perf_counter() - started:.0f} s)"
    )


if __name__ == "__main__":
    main()
