"""Embedding throughput: MiniLMEmbedding versus chromadb's default ONNX function, same run.

Both read the same installed model.onnx, so the difference is how the work is batched
(chromadb pads every text to 256 tokens; we sort by length and pad each batch to its
longest) and the session's options. ``--peer-options`` adds a third side: ours with a
session built from other options (``legacy``: arena, memory patterns and pre-packing
off, as before they were left at onnxruntime's defaults), and checks its vectors
against ours (least cosine over every text). Throughput is texts per CPU-second of
this process (``time.process_time``, all threads) beside texts per wall second; pin
the process to one core (``taskset -c 1``) with ``--threads 1`` on a shared machine.
Also times re-embedding an unchanged corpus through the cache. Prints Markdown
tables; the numbers go into docs/benchmarks.md.

    taskset -c 1 .venv/bin/python bench/bench_embedding.py --threads 1 --peer-options legacy
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import onnxruntime as ort
from chromadb.utils.embedding_functions.onnx_mini_lm_l6_v2 import ONNXMiniLM_L6_V2

from retrieval_eval.index.embedding import MiniLMEmbedding, available_cores
from retrieval_eval.index.embedding_cache import EmbeddingCache
from retrieval_eval.index.model_install import default_model_dir


def _sentences(corpus: Path) -> list[str]:
    sentences: list[str] = []
    with corpus.open(encoding="utf-8") as lines:
        for line in lines:
            text = json.loads(line)["text"]
            sentences += [s.strip() for s in re.split(r"(?<=\.)\s+", text) if s.strip()]
    return sentences


def passages(corpus: Path, count: int, words: int) -> list[str]:
    """Consecutive Cranfield sentences joined until each passage has ~``words`` words."""
    result: list[str] = []
    current: list[str] = []
    for sentence in _sentences(corpus):
        current += sentence.split()
        if len(current) >= words:
            result.append(" ".join(current[:words]))
            current = []
            if len(result) == count:
                return result
    raise SystemExit(f"the corpus yields only {len(result)} passages of {words} words")


def _seconds(embed: Callable[[list[str]], object], texts: list[str]) -> tuple[float, float]:
    """(wall seconds, CPU seconds of this process) for one call."""
    wall, cpu = time.perf_counter(), time.process_time()
    embed(texts)
    return time.perf_counter() - wall, time.process_time() - cpu


def legacy_session(model_dir: Path, threads: int | None) -> ort.InferenceSession:
    """The session MiniLMEmbedding built before its options were left at the defaults."""
    options = ort.SessionOptions()
    options.log_severity_level = 3
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.enable_cpu_mem_arena = False
    options.enable_mem_pattern = False
    options.add_session_config_entry("session.disable_prepacking", "1")
    if threads is not None:
        options.intra_op_num_threads = threads
    return ort.InferenceSession(
        str(model_dir / "model.onnx"), options, providers=["CPUExecutionProvider"]
    )


def _throughput_rows(
    sides: Sequence[tuple[str, Callable[[list[str]], object]]],
    sets: Sequence[tuple[str, list[str]]],
    runs: int,
) -> list[str]:
    """One row per text set: texts per CPU-second and per wall second for each side, and
    each side's CPU time as a ratio of the first side's (higher: the first is faster)."""
    rows = []
    for label, texts in sets:
        # Interleaved, so a load spike on this shared machine hits every side alike.
        times: list[list[tuple[float, float]]] = [[] for _ in sides]
        for _ in range(runs):
            for index, (_, embed) in enumerate(sides):
                times[index].append(_seconds(embed, texts))
        walls = [statistics.median(wall for wall, _ in side) for side in times]
        cpus = [statistics.median(cpu for _, cpu in side) for side in times]
        cells = [
            f"{len(texts) / cpu:,.1f} ({len(texts) / wall:,.1f})"
            for wall, cpu in zip(walls, cpus, strict=True)
        ]
        ratios = [f"**{cpu / cpus[0]:.2f}×**" for cpu in cpus[1:]]
        rows.append(f"| {label} | {len(texts)} | " + " | ".join(cells + ratios) + " |")
    return rows


def _least_cosine(a: object, b: object) -> float:
    left, right = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    cosines = (left * right).sum(1) / np.linalg.norm(left, axis=1) / np.linalg.norm(right, axis=1)
    return float(cosines.min())


def _cache_row(model_dir: Path, texts: list[str], runs: int, threads: int) -> str:
    cold_times, warm_times, embedded = [], [], []
    for _ in range(runs):
        with tempfile.TemporaryDirectory() as folder:
            with EmbeddingCache(Path(folder)) as cache:
                cold = MiniLMEmbedding(model_dir, cache, intra_op_threads=threads)
                start = time.perf_counter()
                cold.embed(texts)
                cold_times.append(time.perf_counter() - start)
            with EmbeddingCache(Path(folder)) as cache:  # reopened, as by the next CI run
                warm = MiniLMEmbedding(model_dir, cache, intra_op_threads=threads)
                start = time.perf_counter()
                warm.embed(texts)
                warm_times.append(time.perf_counter() - start)
                embedded.append(warm.texts_embedded)
    cold_s, warm_s = statistics.median(cold_times), statistics.median(warm_times)
    return (
        f"| {len(texts)} short passages | {cold_s * 1000:,.0f} ms | {warm_s * 1000:,.1f} ms | "
        f"{max(embedded)} | **{warm_s / cold_s:.1%}** |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--short", type=int, default=2000, help="number of ~40-word passages")
    parser.add_argument("--long", type=int, default=200, help="number of 256-token passages")
    parser.add_argument("--batch-size", type=int, default=None)
    parser.add_argument("--token-budget", type=int, default=None)
    parser.add_argument(
        "--peer-options",
        choices=["legacy"],
        default=None,
        help="also measure ours with the session options it had before (legacy: arena, "
        "memory patterns and pre-packing off) and compare its vectors with ours",
    )
    parser.add_argument(
        "--peer-budget",
        type=int,
        default=None,
        help="also measure ours with this token budget per model call (texts x padded length)",
    )
    parser.add_argument("--no-cache-row", action="store_true")
    parser.add_argument(
        "--threads",
        type=int,
        default=None,
        help="pin both sides to N onnxruntime threads (default: ours uses every core, "
        "chromadb its own default); 1 is robust on a machine shared with other jobs",
    )
    args = parser.parse_args()

    model_dir = default_model_dir(Path.home())
    threads = args.threads or available_cores()
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from cranfield_data import cranfield_beir

    corpus = cranfield_beir() / "corpus.jsonl"
    short = passages(corpus, args.short, 40)
    # 300 words of Cranfield text always exceed 256 wordpieces (230 words sometimes do
    # not), so every long passage is truncated to exactly 256 tokens by both.
    long = passages(corpus, args.long, 300)
    batch: dict[str, int] = {}
    if args.batch_size is not None:
        batch["batch_size"] = args.batch_size
    if args.token_budget is not None:
        batch["token_budget"] = args.token_budget
    ours = MiniLMEmbedding(model_dir, intra_op_threads=threads, **batch)
    sides: list[tuple[str, Callable[[list[str]], object]]] = [("ours", ours.embed)]
    if args.peer_options == "legacy":
        old = MiniLMEmbedding(model_dir, intra_op_threads=threads, **batch)
        old.__dict__["_session"] = legacy_session(model_dir, threads)
        sides.append(("ours, legacy session options", old.embed))
    theirs = ONNXMiniLM_L6_V2(preferred_providers=["CPUExecutionProvider"])
    if args.threads is not None:
        # chromadb builds its session in a cached property with no thread setting;
        # prime that property with the same session options plus the thread count.
        options = ort.SessionOptions()
        options.log_severity_level = 3
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        options.intra_op_num_threads = args.threads
        theirs.__dict__["model"] = ort.InferenceSession(
            str(model_dir / "model.onnx"), options, providers=["CPUExecutionProvider"]
        )
    if args.peer_budget is not None:
        wider = MiniLMEmbedding(
            model_dir, intra_op_threads=threads, **{**batch, "token_budget": args.peer_budget}
        )
        sides.append((f"ours, token budget {args.peer_budget:,}", wider.embed))
    sides.append(("chromadb default", theirs))
    for _, embed in sides:
        embed(short[:64])  # warm-up: session creation and first-run allocations
        embed(long[:8])

    print(
        f"threads: {args.threads or 'default'}, cores: {available_cores()}, "
        f"runs: {args.runs} (medians), batch size: {ours.batch_size}, "
        f"token budget: {ours.token_budget}, load average: {os.getloadavg()[0]:.1f}\n"
    )
    if args.peer_options is not None:
        least = min(_least_cosine(ours.embed(texts), sides[1][1](texts)) for texts in (short, long))
        print(
            f"least cosine, ours vs {sides[1][0]}, "
            f"over all {len(short) + len(long)} texts: {least:.7f}\n"
        )
    names = [name for name, _ in sides]
    print(
        "| passages | count | "
        + " | ".join(f"{name}: texts/CPU-s (texts/s)" for name in names)
        + " | "
        + " | ".join(f"{name} CPU / ours" for name in names[1:])
        + " |"
    )
    print("| --- | ---: |" + " ---: |" * (2 * len(names) - 1))
    for row in _throughput_rows(sides, [("~40 words", short), ("256 tokens", long)], args.runs):
        print(row, flush=True)
    if not args.no_cache_row:
        print("\n| corpus | cold embed | cache-hit embed | embedded on 2nd run | cached / cold |")
        print("| --- | ---: | ---: | ---: | ---: |")
        print(_cache_row(model_dir, short, args.runs, threads))


if __name__ == "__main__":
    main()
