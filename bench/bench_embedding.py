"""Embedding throughput: MiniLMEmbedding versus chromadb's default ONNX function, same run.

Both read the same installed model.onnx, so the difference is only how the work is
batched (chromadb pads every text to 256 tokens; we sort by length and pad each
batch to its longest). Also times re-embedding an unchanged corpus through the
cache. Prints a Markdown table; the numbers go into docs/benchmarks.md.

    .venv/bin/python bench/bench_embedding.py [--runs 5] [--short 2000] [--long 200] [--threads 1]
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

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


def _seconds(embed: Callable[[list[str]], object], texts: list[str]) -> float:
    start = time.perf_counter()
    embed(texts)
    return time.perf_counter() - start


def _throughput_rows(
    ours: MiniLMEmbedding,
    theirs: ONNXMiniLM_L6_V2,
    sets: Sequence[tuple[str, list[str]]],
    runs: int,
) -> list[str]:
    rows = []
    for label, texts in sets:
        # Interleaved, so a load spike on this shared machine hits both sides alike.
        ours_times, theirs_times = [], []
        for _ in range(runs):
            ours_times.append(_seconds(ours.embed, texts))
            theirs_times.append(_seconds(theirs, texts))
        ours_s, theirs_s = statistics.median(ours_times), statistics.median(theirs_times)
        rows.append(
            f"| {label} | {len(texts)} | {len(texts) / ours_s:,.0f} | "
            f"{len(texts) / theirs_s:,.0f} | **{theirs_s / ours_s:.2f}×** |"
        )
    return rows


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
    batch = {} if args.batch_size is None else {"batch_size": args.batch_size}
    ours = MiniLMEmbedding(model_dir, intra_op_threads=threads, **batch)
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
    ours.embed(short[:64])  # warm-up: session creation and first-run allocations
    theirs(short[:64])

    print(
        f"threads: {args.threads or 'default'}, cores: {available_cores()}, "
        f"runs: {args.runs} (medians), batch size: {ours.batch_size}\n"
    )
    print("| passages | count | ours (texts/s) | chromadb default (texts/s) | speed-up |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for row in _throughput_rows(
        ours, theirs, [("~40 words", short), ("256 tokens", long)], args.runs
    ):
        print(row)
    print("\n| corpus | cold embed | cache-hit embed | embedded on 2nd run | cached / cold |")
    print("| --- | ---: | ---: | ---: | ---: |")
    print(_cache_row(model_dir, short, args.runs, threads))


if __name__ == "__main__":
    main()
