"""The vector engines' retrievers built from their tables, each client imported only when
its engine is chosen (a missing one is a configuration error naming the extra)."""

from __future__ import annotations

from retrieval_eval.errors import ConfigError
from retrieval_eval.retrieval.config import RetrieversConfig
from retrieval_eval.retrieval.external.engine import (
    EngineRetriever,
    LocalFolder,
    Store,
    missing_package,
)
from retrieval_eval.retrieval.external.engines_config import (
    ENGINE_CONFIGS,
    EngineConfig,
    LanceDbConfig,
    MilvusConfig,
    QdrantConfig,
)


def build_engine(name: str, config: RetrieversConfig) -> EngineRetriever:
    """The engine's retriever; with no table, its defaults (embedded, in the cache folder),
    so that naming the engine in [dataset_retrievers] is enough."""
    table: EngineConfig = getattr(config, name) or ENGINE_CONFIGS[name]()
    label = f"retrievers.{name}"
    location = table.location(label)
    secret = table.secret(label)
    local = LocalFolder(table.local_path(name, config.engine_cache_dir()))
    try:
        store = _store(name, table, local, location, secret)
    except ImportError as error:
        raise missing_package(name, name, error) from None
    return EngineRetriever(name, table, config.dense, store)


def _store(
    name: str, table: EngineConfig, local: LocalFolder, location: str | None, secret: str | None
) -> Store:
    if name == "qdrant":
        from retrieval_eval.retrieval.external.qdrant_engine import QdrantStore

        assert isinstance(table, QdrantConfig)
        return QdrantStore(table, local, location, secret)
    if name == "lancedb":
        from retrieval_eval.retrieval.external.lancedb_engine import LanceDbStore

        assert isinstance(table, LanceDbConfig)
        return LanceDbStore(table, local, location, secret)
    if name == "milvus":
        from retrieval_eval.retrieval.external.milvus_engine import MilvusStore

        assert isinstance(table, MilvusConfig)
        return MilvusStore(table, local, location, secret)
    raise ConfigError(f"unknown engine {name!r}")
