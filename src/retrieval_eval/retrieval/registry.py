"""Retriever names → instances, the one place a name from a config file is resolved."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from retrieval_eval.errors import ConfigError
from retrieval_eval.retrieval.base import Closeable, Retriever
from retrieval_eval.retrieval.config import HYBRID_SIDES, RetrieversConfig
from retrieval_eval.retrieval.external.services import SERVICE_RETRIEVERS

RETRIEVER_NAMES: tuple[str, ...] = (
    "dense",
    "bm25",
    "like",
    "hybrid",
    "custom",
    "postgres",
    "chroma",
    "http",
    "run-file",
    "qdrant",
    "lancedb",
    "milvus",
    "langchain",
    "llamaindex",
)


def build_retriever(
    name: str,
    config: RetrieversConfig,
    *,
    anthropic_api_key: str | None = None,
    rerank_cache_dir: Path | None = None,
) -> Retriever:
    """A fresh, unindexed retriever. Imports are local so that choosing ``bm25``
    never pays for importing chromadb and onnxruntime. The key and the cache
    folder are for ``hybrid``'s rerank stage (the edges read the key)."""
    if name == "bm25":
        from retrieval_eval.retrieval.builtin.bm25 import Bm25Retriever

        return Bm25Retriever(config.bm25)
    if name == "like":
        from retrieval_eval.retrieval.builtin.like import LikeRetriever

        return LikeRetriever(config.like)
    if name == "dense":
        from retrieval_eval.retrieval.builtin.dense import DenseRetriever

        return DenseRetriever(config.dense)
    if name == "hybrid":
        return build_hybrid(
            config, anthropic_api_key=anthropic_api_key, rerank_cache_dir=rerank_cache_dir
        )
    if name == "custom":
        if config.custom is None:
            raise ConfigError(
                "retriever `custom` needs a [retrievers.custom] table with `python` or `command`"
            )
        from retrieval_eval.retrieval.external.custom import build_custom

        return build_custom(config.custom)
    if name in ("langchain", "llamaindex"):
        from retrieval_eval.retrieval.external.frameworks import build_framework

        return build_framework(name, getattr(config, name))
    if name in SERVICE_RETRIEVERS:
        from retrieval_eval.retrieval.external.services import build_service

        return build_service(name, config)
    raise ConfigError(f"unknown retriever {name!r}; choose one of: {', '.join(RETRIEVER_NAMES)}")


def hybrid_sides(config: RetrieversConfig) -> dict[str, Retriever]:
    """Fresh, unindexed retrievers for each side ``hybrid`` fuses, in side order."""
    return {side: build_retriever(side, config) for side in HYBRID_SIDES}


def build_hybrid(
    config: RetrieversConfig,
    sides: Mapping[str, Retriever] | None = None,
    *,
    anthropic_api_key: str | None = None,
    rerank_cache_dir: Path | None = None,
) -> Retriever:
    """``hybrid``, the one place it is assembled: on ``sides`` when the caller already
    holds them (the run's pool shares its indexed dense and bm25), else on fresh ones,
    with the rerank stage ``[retrievers.hybrid]`` chooses."""
    from retrieval_eval.retrieval.builtin.hybrid import HybridRetriever
    from retrieval_eval.retrieval.rerank.build import build_reranker

    return HybridRetriever(
        config.hybrid,
        hybrid_sides(config) if sides is None else sides,
        build_reranker(
            config.hybrid, anthropic_api_key=anthropic_api_key, cache_dir=rerank_cache_dir
        ),
    )


def close_retriever(retriever: object) -> None:
    """Release what a retriever (or a rerank stage) holds, if it holds anything."""
    if isinstance(retriever, Closeable):
        retriever.close()
