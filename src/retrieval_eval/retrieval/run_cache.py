"""The ranked results of one retriever configuration on one corpus and query list, kept so
that asking again (a second `retrieval-eval compare`) retrieves nothing.

Only the retrievers whose results the key decides are kept: the in-process ones (dense,
bm25, like, and hybrid without a reranker). A custom system, a service or an LLM reranker
answers from something the configuration does not name (its code, its index, the model
behind an API), so it is asked every time. The key is a sha256 over everything that
decides the ranking: the retriever's name and its own settings (hybrid's include both
sides'), the embedding model's files (name, size, modification time), the corpus
fingerprint, every query (id, text, tags), k, and this package's version. The cached
latency is the one measured when the results were retrieved.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path

from retrieval_eval import __version__
from retrieval_eval.fileio import atomic_write_text
from retrieval_eval.retrieval.base import Hit, SearchResult
from retrieval_eval.retrieval.config import RetrieversConfig
from retrieval_eval.retrieval.search import own_settings
from retrieval_eval.retrieval.timed import QuerySpec, TimedResult

RUNS_SUBDIR = "runs"
_FORMAT = 1
_KEPT = frozenset({"dense", "bm25", "like", "hybrid"})
_EMBEDS = frozenset({"dense", "hybrid"})


def run_key(
    name: str,
    config: RetrieversConfig,
    *,
    corpus_fingerprint: str,
    queries: Sequence[QuerySpec],
    k: int,
) -> str | None:
    """The cache key of these results, or None when they must be retrieved every time."""
    if name not in _KEPT or (name == "hybrid" and config.hybrid.reranker != "none"):
        return None
    model: list[tuple[str, int, int]] = []
    model_dir = config.dense.model_dir
    if name in _EMBEDS and model_dir is not None and model_dir.is_dir():
        model = sorted(
            (p.name, p.stat().st_size, p.stat().st_mtime_ns) for p in model_dir.iterdir()
        )
    record = {
        "format": _FORMAT,
        "version": __version__,
        "retriever": name,
        "settings": own_settings(name, config),
        "model": model,
        "corpus": corpus_fingerprint,
        "queries": [[q.query_id, q.text, list(q.tags)] for q in queries],
        "k": k,
    }
    return hashlib.sha256(json.dumps(record, sort_keys=True).encode("utf-8")).hexdigest()


def read_run(cache_dir: Path, key: str) -> list[TimedResult] | None:
    """The results kept under ``key``; None when there are none (or they are unreadable,
    which only costs retrieving them again)."""
    path = cache_dir / RUNS_SUBDIR / f"{key}.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if data.get("key") != key:
            return None
        return [
            TimedResult(
                query_id=str(item["query_id"]),
                result=SearchResult(
                    hits=tuple(Hit(str(d), float(s), str(t)) for d, s, t in item["hits"]),
                    cost_usd=float(item["cost_usd"]),
                    rerank_s=None if item["rerank_s"] is None else float(item["rerank_s"]),
                ),
                latency_s=float(item["latency_s"]),
            )
            for item in data["results"]
        ]
    except (OSError, ValueError, KeyError, TypeError):
        return None


def write_run(cache_dir: Path, key: str, timed: Sequence[TimedResult]) -> None:
    results = [
        {
            "query_id": t.query_id,
            "latency_s": t.latency_s,
            "cost_usd": t.result.cost_usd,
            "rerank_s": t.result.rerank_s,
            "hits": [[hit.doc_id, hit.score, hit.text] for hit in t.result.hits],
        }
        for t in timed
    ]
    path = cache_dir / RUNS_SUBDIR / f"{key}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, json.dumps({"key": key, "results": results}) + "\n")
