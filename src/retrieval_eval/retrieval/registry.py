"""Retriever names → instances, the one place a name from a config file is resolved."""

from __future__ import annotations

from pathlib import Path

from retrieval_eval.errors import ConfigError
from retrieval_eval.retrieval.base import Retriever
from retrieval_eval.retrieval.config import RetrieversConfig
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
        from retrieval_eval.retrieval.builtin.bm25 import Bm25Retriever
        from retrieval_eval.retrieval.builtin.dense import DenseRetriever
        from retrieval_eval.retrieval.builtin.hybrid import HybridRetriever
        from retrieval_eval.retrieval.rerank.build import build_reranker

        return HybridRetriever(
            config.hybrid,
            {"dense": DenseRetriever(config.dense), "bm25": Bm25Retriever(config.bm25)},
            build_reranker(
                config.hybrid, anthropic_api_key=anthropic_api_key, cache_dir=rerank_cache_dir
            ),
        )
    if name == "custom":
        if config.custom is None:
            raise ConfigError(
                "retriever `custom` needs a [retrievers.custom] table with `python` or `command`"
            )
        from retrieval_eval.retrieval.external.custom import build_custom

        return build_custom(config.custom)
    if name in SERVICE_RETRIEVERS:
        from retrieval_eval.retrieval.external.services import build_service

        return build_service(name, config)
    raise ConfigError(f"unknown retriever {name!r}; choose one of: {', '.join(RETRIEVER_NAMES)}")


def with_machine_defaults(config: RetrieversConfig, *, home: Path, cores: int) -> RetrieversConfig:
    """Fill the settings whose defaults depend on the machine, for the edges to call
    (the core never looks at the environment): the model folder where
    ``retrieval-eval model install`` puts it, and one ONNX thread per available core."""
    from retrieval_eval.index.model_install import default_model_dir

    dense = config.dense
    updates: dict[str, object] = {}
    if dense.model_dir is None:
        updates["model_dir"] = default_model_dir(home)
    if dense.threads is None:
        updates["threads"] = cores
    if not updates:
        return config
    return config.model_copy(update={"dense": dense.model_copy(update=updates)})


def close_retriever(retriever: Retriever) -> None:
    """Release what a retriever holds (a subprocess, an in-memory collection), if anything."""
    close = getattr(retriever, "close", None)
    if callable(close):
        close()
