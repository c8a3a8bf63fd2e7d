"""One retriever configuration's ranked results, kept so that asking again retrieves
nothing: the key changes with everything that decides the ranking and is None for what
the configuration cannot pin down (a custom system, a reranker); what was written reads
back the same, and anything unreadable or under another key is a miss."""

from __future__ import annotations

import os
from pathlib import Path

from retrieval_eval.retrieval.base import Hit, SearchResult
from retrieval_eval.retrieval.config import (
    Bm25Config,
    CustomConfig,
    DenseConfig,
    HybridConfig,
    RetrieversConfig,
)
from retrieval_eval.retrieval.run_cache import RUNS_SUBDIR, read_run, run_key, write_run
from retrieval_eval.retrieval.timed import QuerySpec, TimedResult

QUERIES = (QuerySpec("q1", "lisbon budget", ("travel",)), QuerySpec("q2", "pesto"))


def key(name: str, config: RetrieversConfig, **changes: object) -> str | None:
    arguments: dict[str, object] = {"corpus_fingerprint": "c1", "queries": QUERIES, "k": 10}
    arguments.update(changes)
    return run_key(name, config, **arguments)  # type: ignore[arg-type]


def test_the_key_changes_with_whatever_decides_the_ranking(tmp_path: Path) -> None:
    model = tmp_path / "model"
    model.mkdir()
    (model / "model.onnx").write_bytes(b"weights")
    config = RetrieversConfig(dense=DenseConfig(model_dir=model))
    first = key("dense", config)
    assert first is not None and first == key("dense", config)
    others = {
        key("bm25", config),
        key("dense", config, k=5),
        key("dense", config, corpus_fingerprint="c2"),
        key("dense", config, queries=(QuerySpec("q1", "lisbon budget"), QUERIES[1])),
        key("dense", RetrieversConfig(dense=DenseConfig(model_dir=model, chunk_tokens=128))),
    }
    assert first not in others and len(others) == 5
    os.utime(model / "model.onnx", ns=(1, 1))  # the model's files changed
    assert key("dense", config) != first
    # bm25's settings are its own: the dense model does not enter its key.
    assert key("bm25", config) == key("bm25", RetrieversConfig())
    assert key("bm25", config) != key("bm25", RetrieversConfig(bm25=Bm25Config(k1=1.2)))


def test_what_the_configuration_cannot_pin_down_is_never_kept() -> None:
    custom = RetrieversConfig(custom=CustomConfig(command=["./search"]))
    assert key("custom", custom) is None
    reranked = RetrieversConfig(
        hybrid=HybridConfig(reranker="custom", custom=CustomConfig(command=["./rerank"]))
    )
    assert key("hybrid", reranked) is None
    assert key("hybrid", RetrieversConfig()) is not None


def test_results_read_back_as_written_and_anything_else_is_a_miss(tmp_path: Path) -> None:
    timed = [
        TimedResult(
            "q1",
            SearchResult(hits=(Hit("travel/lisbon", 0.9, "Budget"),), cost_usd=0.0, rerank_s=None),
            0.012,
        ),
        TimedResult("q2", SearchResult(hits=(), cost_usd=0.001, rerank_s=0.5), 0.2),
    ]
    write_run(tmp_path, "k1", timed)
    assert read_run(tmp_path, "k1") == timed
    assert read_run(tmp_path, "k2") is None
    # A file whose own key differs (renamed by hand) and a torn file are misses.
    (tmp_path / RUNS_SUBDIR / "k3.json").write_bytes(
        (tmp_path / RUNS_SUBDIR / "k1.json").read_bytes()
    )
    assert read_run(tmp_path, "k3") is None
    (tmp_path / RUNS_SUBDIR / "k1.json").write_text('{"key": "k1", "results": [{"query', "utf-8")
    assert read_run(tmp_path, "k1") is None
