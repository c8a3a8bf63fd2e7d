"""A paid reranker's answers kept across runs in one SQLite file: an answer put is got
back by its key from another connection, a key not put is a miss, and a file that is no
SQLite database is an error saying it may be deleted."""

from __future__ import annotations

from pathlib import Path

import pytest

from retrieval_eval.errors import InputError
from retrieval_eval.retrieval.rerank.base import Reranking
from retrieval_eval.retrieval.rerank.cache import CACHE_FILE, RerankCache


def test_an_answer_is_kept_across_connections(tmp_path: Path) -> None:
    cache = RerankCache(tmp_path / "rerank")
    cache.put("k1", Reranking(ranked=("b", "a"), cost_usd=0.0015))
    cache.put("k1", Reranking(ranked=("a", "b"), cost_usd=0.002))  # the newer answer wins
    cache.close()
    again = RerankCache(tmp_path / "rerank")
    assert again.get("k1") == Reranking(ranked=("a", "b"), cost_usd=0.002)
    assert again.get("k2") is None
    again.close()
    assert (tmp_path / "rerank" / CACHE_FILE).is_file()


def test_a_file_that_is_no_database_says_to_delete_it(tmp_path: Path) -> None:
    (tmp_path / CACHE_FILE).write_bytes(b"not a database, just some text" * 100)
    with pytest.raises(InputError) as raised:
        RerankCache(tmp_path)
    assert "the rerank cache is not a usable SQLite database" in str(raised.value)
    assert "delete it (it is only a cache)" in str(raised.value)
    assert raised.value.file == str(tmp_path / CACHE_FILE)
