"""Building an engine's retriever from its table: the right engine's store, embedded in the
run's cache folder when no server is named (real Qdrant local mode here), a server and its
key from the environment the edge read, and a missing client as a configuration error
naming the extra to install."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from retrieval_eval.errors import ConfigError
from retrieval_eval.retrieval.config import RetrieversConfig
from retrieval_eval.retrieval.defaults import resolve_defaults
from retrieval_eval.retrieval.external.engine import EngineRetriever
from retrieval_eval.retrieval.external.engines import build_engine
from retrieval_eval.retrieval.external.engines_config import (
    ENGINE_CONFIGS,
    LOCAL_STORE,
    QdrantConfig,
    with_engine_environment,
)
from retrieval_eval.retrieval.external.lancedb_engine import LanceDbStore
from retrieval_eval.retrieval.external.milvus_engine import MilvusStore
from retrieval_eval.retrieval.external.qdrant_engine import QdrantStore

CLIENTS = {"qdrant": "qdrant_client", "lancedb": "lancedb", "milvus": "pymilvus"}
STORES: dict[str, type[Any]] = {
    "qdrant": QdrantStore,
    "lancedb": LanceDbStore,
    "milvus": MilvusStore,
}


def _resolved(tmp_path: Path, **tables: object) -> RetrieversConfig:
    config = RetrieversConfig.model_validate(tables)
    return resolve_defaults(config, home=tmp_path, cores=1, cache_dir=tmp_path / "cache")


@pytest.mark.parametrize("name", sorted(ENGINE_CONFIGS))
def test_naming_the_engine_is_enough_its_store_is_embedded_in_the_cache_folder(
    tmp_path: Path, name: str
) -> None:
    retriever = build_engine(name, _resolved(tmp_path))

    assert isinstance(retriever, EngineRetriever)
    assert (retriever.name, retriever.label, retriever.store.engine) == (
        name,
        f"retrievers.{name}",
        name,
    )
    assert type(retriever.table) is ENGINE_CONFIGS[name]
    store: Any = retriever.store
    assert type(store) is STORES[name]
    assert store._local.path() == tmp_path / "cache" / LOCAL_STORE[name]
    retriever.close()


def test_qdrant_local_mode_opens_in_the_folder_the_table_names(tmp_path: Path) -> None:
    retriever = build_engine(
        "qdrant", _resolved(tmp_path, qdrant={"local_dir": str(tmp_path / "mine")})
    )
    store = retriever.store
    assert isinstance(store, QdrantStore)
    try:
        client = store.client  # a real qdrant-client in local mode
        assert client.get_collections().collections == []
    finally:
        retriever.close()
    assert not store.approximate  # embedded: exact search
    assert any((tmp_path / "mine").iterdir())
    assert not (tmp_path / "cache" / "qdrant").exists()


def test_a_server_and_its_key_come_from_the_environment_the_edge_read(tmp_path: Path) -> None:
    table = QdrantConfig(url_env="QDRANT_URL", api_key_env="QDRANT_KEY")
    read = with_engine_environment(
        table, environ={"QDRANT_URL": "http://127.0.0.1:6333", "QDRANT_KEY": "k-123"}
    )
    unset = with_engine_environment(table, environ={"QDRANT_URL": "http://127.0.0.1:6333"})
    config = _resolved(tmp_path)

    store = build_engine("qdrant", config.model_copy(update={"qdrant": read})).store
    assert isinstance(store, QdrantStore)
    assert (store.url, store.approximate) == ("http://127.0.0.1:6333", True)
    with pytest.raises(ConfigError) as error:
        build_engine("qdrant", config.model_copy(update={"qdrant": unset}))
    assert "retrievers.qdrant: the environment variable QDRANT_KEY is not set" in str(error.value)


@pytest.mark.parametrize("name", sorted(ENGINE_CONFIGS))
def test_a_missing_client_is_a_configuration_error_naming_the_extra(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    monkeypatch.setitem(sys.modules, CLIENTS[name], None)  # as if not installed

    with pytest.raises(ConfigError) as error:
        build_engine(name, _resolved(tmp_path))

    assert f"retriever `{name}` needs its client library" in str(error.value)
    assert f"pip install 'retrieval-eval[{name}]'" in str(error.value)
