"""Retrievers on Cranfield: quality, index and query time, peak memory — same run.

Each (system, run) is a fresh child process, so peak RSS belongs to that system
alone and no system warms another's caches. Peers measured alongside ours:

- ``bm25s-lucene``: the bm25s library scoring whole documents with its own
  ``retrieve`` — same tokens (our tokenizer), same k1/b. Our ``bm25`` must land
  within ±0.01 NDCG@10 of it.
- ``fts5``: SQLite FTS5's built-in bm25() on the same tokens, the alternative
  we did not choose (its k1=1.2, b=0.75 are hard-coded), with ``bm25-1.2-0.75``
  (ours at those parameters) as its like-for-like peer.

Quality is deterministic; times are medians over ``--runs``. Prints a Markdown
table for docs/benchmarks.md.

    .venv/bin/python bench/bench_retrievers.py [--runs 3] [--systems bm25,like,...]
"""

from __future__ import annotations

import argparse
import json
import resource
import sqlite3
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from retrieval_eval.index.chunking import chunk_document
from retrieval_eval.load.beir import BeirData, load_beir
from retrieval_eval.retrieval.builtin.tokenizer import KeywordTokenizer
from retrieval_eval.retrieval.config import Bm25Config, RetrieversConfig
from retrieval_eval.retrieval.defaults import resolve_defaults
from retrieval_eval.retrieval.registry import (
    build_retriever,
    close_retriever,
)
from retrieval_eval.retrieval.timed import QuerySpec, run_queries, time_index
from retrieval_eval.score.query_scores import score_queries

MEASURES = ("ndcg@10", "mrr@10", "p@5", "recall@100")
SYSTEMS = ("bm25", "bm25s-lucene", "bm25-1.2-0.75", "fts5", "like", "dense", "hybrid")
K = 100

Ranking = dict[str, list[str]]


def _rss_mb() -> float:
    with open("/proc/self/statm") as statm:
        pages = int(statm.read().split()[1])
    return pages * resource.getpagesize() / 2**20


def _whole_document_texts(data: BeirData) -> list[tuple[str, str]]:
    """What our bm25 indexes, but one piece per document (chunking rules, no cap)."""
    texts = []
    for document in data.corpus.documents:
        chunks = chunk_document(document, max_tokens=10**9, overlap=0)
        texts.append((document.id, "\n".join(chunk.text for chunk in chunks)))
    return texts


def _ours(name: str, config: RetrieversConfig, data: BeirData) -> tuple[float, float, Ranking]:
    retriever = build_retriever(name, config)
    index_s = time_index(retriever, data.corpus)
    queries = [QuerySpec(qid, text) for qid, text in data.queries.items()]
    started = time.perf_counter()
    timed = run_queries(retriever, queries, K)
    query_s = time.perf_counter() - started
    close_retriever(retriever)
    return index_s, query_s, {t.query_id: [h.doc_id for h in t.result.hits] for t in timed}


def _bm25s_lucene(data: BeirData) -> tuple[float, float, Ranking]:
    import bm25s

    config = Bm25Config()
    tokenizer = KeywordTokenizer(stopwords=config.stopwords, stemming=config.stemming)
    started = time.perf_counter()
    docs = _whole_document_texts(data)
    model = bm25s.BM25(k1=config.k1, b=config.b, method="lucene")
    model.index([tokenizer.tokenize(text) for _, text in docs], show_progress=False)
    index_s = time.perf_counter() - started
    ids = [doc_id for doc_id, _ in docs]
    rankings: Ranking = {}
    started = time.perf_counter()
    for qid, text in data.queries.items():
        tokens = tokenizer.tokenize(text)
        found, scores = model.retrieve([tokens], k=K, show_progress=False)
        rankings[qid] = [ids[i] for i, s in zip(found[0], scores[0], strict=True) if s > 0]
    return index_s, time.perf_counter() - started, rankings


def _fts5(data: BeirData) -> tuple[float, float, Ranking]:
    tokenizer = KeywordTokenizer()
    started = time.perf_counter()
    db = sqlite3.connect(":memory:")
    db.execute("CREATE VIRTUAL TABLE docs USING fts5(id UNINDEXED, body)")
    with db:
        db.executemany(
            "INSERT INTO docs VALUES (?, ?)",
            (
                (doc_id, " ".join(tokenizer.tokenize(text)))
                for doc_id, text in _whole_document_texts(data)
            ),
        )
    index_s = time.perf_counter() - started
    rankings: Ranking = {}
    started = time.perf_counter()
    for qid, text in data.queries.items():
        terms = " OR ".join(f'"{token}"' for token in tokenizer.tokenize(text))
        rows = db.execute(
            "SELECT id FROM docs WHERE docs MATCH ? ORDER BY bm25(docs), id LIMIT ?", (terms, K)
        ).fetchall()
        rankings[qid] = [row[0] for row in rows]
    return index_s, time.perf_counter() - started, rankings


def child(system: str, dataset: Path) -> dict[str, object]:
    data = load_beir(dataset)
    config = resolve_defaults(RetrieversConfig(), home=Path.home(), cores=2)
    runners: dict[str, Callable[[], tuple[float, float, Ranking]]] = {
        "bm25s-lucene": lambda: _bm25s_lucene(data),
        "fts5": lambda: _fts5(data),
        "bm25-1.2-0.75": lambda: _ours(
            "bm25", config.model_copy(update={"bm25": Bm25Config(k1=1.2, b=0.75)}), data
        ),
    }
    before_mb = _rss_mb()
    index_s, query_s, rankings = runners.get(system, lambda: _ours(system, config, data))()
    scores = score_queries(data.qrels, rankings, list(MEASURES))
    return {
        "system": system,
        **{m: statistics.fmean(scores[m].values()) for m in MEASURES},
        "index_s": index_s,
        "query_ms": query_s / len(data.queries) * 1000,
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "rss_before_mb": before_mb,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--dataset", type=Path, help="BEIR folder (default: Cranfield from tests/data)"
    )
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--systems", default=",".join(SYSTEMS))
    parser.add_argument("--json", type=Path, help="also write every run's numbers here")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.dataset is None:
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        from cranfield_data import cranfield_beir

        args.dataset = cranfield_beir()
    if args.child:
        print(json.dumps(child(args.child, args.dataset)))
        return

    results: dict[str, list[dict[str, float]]] = {}
    for run in range(args.runs):
        for system in args.systems.split(","):
            out = subprocess.run(
                [sys.executable, __file__, "--child", system, "--dataset", str(args.dataset)],
                capture_output=True,
                text=True,
                check=True,
            ).stdout
            results.setdefault(system, []).append(json.loads(out.splitlines()[-1]))
            print(f"run {run + 1}/{args.runs} {system} done", file=sys.stderr)
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n")
    print(render(results))


def render(results: dict[str, list[dict[str, float]]]) -> str:
    def median(system: str, key: str) -> float:
        return statistics.median(r[key] for r in results[system])

    peer = {"bm25": "bm25s-lucene", "fts5": "bm25-1.2-0.75"}
    lines = [
        "| system | NDCG@10 | MRR@10 | P@5 | Recall@100 | ΔNDCG@10 vs peer | index s | query ms | "
        "query time vs peer | peak RSS MB |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for system in results:
        other = peer.get(system, "bm25" if system != "bm25" else "")
        delta = ratio = "—"
        if other in results and other != system:
            delta = f"{median(system, 'ndcg@10') - median(other, 'ndcg@10'):+.4f} vs {other}"
            ratio = f"{median(system, 'query_ms') / median(other, 'query_ms'):.2f}× {other}"
        lines.append(
            f"| {system} | {median(system, 'ndcg@10'):.4f} | {median(system, 'mrr@10'):.4f} | "
            f"{median(system, 'p@5'):.4f} | {median(system, 'recall@100'):.4f} | {delta} | "
            f"{median(system, 'index_s'):.2f} | {median(system, 'query_ms'):.2f} | {ratio} | "
            f"{median(system, 'peak_rss_mb'):.0f} |"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    main()
