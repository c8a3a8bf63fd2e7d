"""The int8 model against FP32, same run: texts/s on 256-token passages, NDCG@10 on Cranfield.

The int8 copy is what `retrieval-eval model install --quantize int8` builds; both
models run with the same thread count, interleaved so a load spike on a shared
machine hits both alike. Quality is the dense retriever's NDCG@10 on Cranfield
(the in-repo copy under tests/data), which is deterministic for each model.

    .venv/bin/python bench/bench_quantized.py [--runs 5] [--passages 128] [--threads 2]
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.data.cranfield import unpack_cranfield  # noqa: E402

from retrieval_eval.index.embedding import MiniLMEmbedding, available_cores  # noqa: E402
from retrieval_eval.index.model_install import default_model_dir, install_model  # noqa: E402
from retrieval_eval.index.model_quantize import quantized_model_dir  # noqa: E402
from retrieval_eval.load.beir import load_beir  # noqa: E402
from retrieval_eval.retrieval.config import RetrieversConfig  # noqa: E402
from retrieval_eval.retrieval.defaults import resolve_defaults  # noqa: E402
from retrieval_eval.retrieval.registry import (  # noqa: E402
    build_retriever,
    close_retriever,
)
from retrieval_eval.retrieval.timed import QuerySpec, run_queries, time_index  # noqa: E402
from retrieval_eval.score.query_scores import score_queries  # noqa: E402


def long_passages(corpus: Path, count: int) -> list[str]:
    """Consecutive Cranfield sentences, 300 words each: always past 256 word pieces."""
    words: list[str] = []
    result: list[str] = []
    with corpus.open(encoding="utf-8") as lines:
        for line in lines:
            for sentence in re.split(r"(?<=\.)\s+", json.loads(line)["text"]):
                words += sentence.split()
                if len(words) >= 300:
                    result.append(" ".join(words[:300]))
                    words = []
                    if len(result) == count:
                        return result
    raise SystemExit(f"only {len(result)} passages of 300 words")


def ndcg(model_dir: Path, dataset: Path, threads: int) -> tuple[float, float]:
    data = load_beir(dataset)
    config = resolve_defaults(RetrieversConfig(), home=Path.home(), cores=threads)
    dense = config.dense.model_copy(update={"model_dir": model_dir, "threads": threads})
    config = config.model_copy(update={"dense": dense})
    retriever = build_retriever("dense", config)
    index_s = time_index(retriever, data.corpus)
    timed = run_queries(retriever, [QuerySpec(q, t) for q, t in data.queries.items()], 10)
    close_retriever(retriever)
    ranking = {t.query_id: [hit.doc_id for hit in t.result.hits] for t in timed}
    scores = score_queries(data.qrels, ranking, ["ndcg@10"])["ndcg@10"]
    return statistics.fmean(scores.get(q, 0.0) for q in data.qrels), index_s


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--passages", type=int, default=128)
    parser.add_argument("--threads", type=int, default=available_cores())
    parser.add_argument("--skip-quality", action="store_true")
    args = parser.parse_args()

    fp32_dir = default_model_dir(Path.home())
    int8_dir = quantized_model_dir(fp32_dir)
    install_model(int8_dir, quantize="int8")
    with tempfile.TemporaryDirectory() as folder:
        dataset = unpack_cranfield(Path(folder))
        texts = long_passages(dataset / "corpus.jsonl", args.passages)
        models = {
            "fp32": MiniLMEmbedding(fp32_dir, intra_op_threads=args.threads),
            "int8": MiniLMEmbedding(int8_dir, intra_op_threads=args.threads),
        }
        for model in models.values():
            model.embed(texts[:8])  # session creation and first-call allocations
        seconds: dict[str, list[float]] = {name: [] for name in models}
        for _ in range(args.runs):
            for name, model in models.items():
                started = time.perf_counter()
                model.embed(texts)
                seconds[name].append(time.perf_counter() - started)
        rate = {name: len(texts) / statistics.median(times) for name, times in seconds.items()}
        print(f"threads {args.threads}, {len(texts)} passages of 256 tokens, {args.runs} runs")
        print("| model | texts/s (median) | vs FP32 | NDCG@10 Cranfield | Δ vs FP32 | index s |")
        print("| --- | ---: | ---: | ---: | ---: | ---: |")
        quality = {}
        for name, directory in (("fp32", fp32_dir), ("int8", int8_dir)):
            quality[name] = (
                (float("nan"), float("nan"))
                if args.skip_quality
                else ndcg(directory, dataset, args.threads)
            )
        for name in models:
            value, index_s = quality[name]
            print(
                f"| {name} | {rate[name]:.1f} | {rate[name] / rate['fp32']:.2f}× | {value:.4f} | "
                f"{value - quality['fp32'][0]:+.4f} | {index_s:.0f} |"
            )


if __name__ == "__main__":
    main()
