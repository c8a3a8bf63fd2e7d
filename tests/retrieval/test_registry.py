from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from retrieval_eval.errors import ConfigError
from retrieval_eval.retrieval.config import (
    Bm25Config,
    CustomConfig,
    FrameworkConfig,
    HybridConfig,
    RetrieversConfig,
)
from retrieval_eval.retrieval.external.engines_config import QdrantConfig
from retrieval_eval.retrieval.external.services_config import (
    ChromaConfig,
    HttpConfig,
    PostgresConfig,
    RunFileConfig,
)
from retrieval_eval.retrieval.registry import (
    RETRIEVER_NAMES,
    build_retriever,
    close_retriever,
)


@pytest.mark.slow
def test_every_name_builds_a_retriever_of_that_name(retrievers_config: RetrieversConfig) -> None:
    # Building connects to nothing: the services are reached when indexing.
    config = retrievers_config.model_copy(
        update={
            "custom": CustomConfig(python="tests.retrieval.own_retriever:make"),
            "postgres": PostgresConfig(dsn="postgresql://127.0.0.1:1/none"),
            "chroma": ChromaConfig(url="http://127.0.0.1:1"),
            "http": HttpConfig(url="http://127.0.0.1:1/search"),
            "run_file": RunFileConfig(path=Path("run.trec")),
            "qdrant": QdrantConfig(url="http://127.0.0.1:1"),
            "langchain": FrameworkConfig(
                object="tests.retrieval.external.framework_notes:langchain_bm25", id_key="doc_id"
            ),
            "llamaindex": FrameworkConfig(
                object="tests.retrieval.external.framework_notes:llamaindex_summary",
                id_key="doc_id",
            ),
        }
    )
    built = {name: build_retriever(name, config) for name in RETRIEVER_NAMES}
    names = {name: retriever.name for name, retriever in built.items()}
    for retriever in built.values():
        close_retriever(retriever)
    assert names == {
        "dense": "dense",
        "bm25": "bm25",
        "like": "like",
        "hybrid": "hybrid",
        "custom": "title-search",
        "postgres": "postgres",
        "chroma": "chroma",
        "http": "http",
        "run-file": "run-file",
        # embedded with no table (lancedb, milvus): their folder is made on first use
        "qdrant": "qdrant",
        "lancedb": "lancedb",
        "milvus": "milvus",
        "langchain": "langchain",
        "llamaindex": "llamaindex",
    }


def test_an_unknown_name_lists_the_accepted_ones() -> None:
    with pytest.raises(ConfigError) as caught:
        build_retriever("elastic", RetrieversConfig())
    assert str(caught.value) == (
        "unknown retriever 'elastic'; choose one of: "
        "dense, bm25, like, hybrid, custom, postgres, chroma, http, run-file, "
        "qdrant, lancedb, milvus, langchain, llamaindex"
    )


def test_custom_without_its_table_says_what_to_add() -> None:
    with pytest.raises(ConfigError, match=r"needs a \[retrievers.custom\] table"):
        build_retriever("custom", RetrieversConfig())


@pytest.mark.parametrize(
    "name", ["postgres", "chroma", "http", "run-file", "langchain", "llamaindex"]
)
def test_a_service_without_its_table_says_what_to_add(name: str) -> None:
    with pytest.raises(ConfigError, match=rf"needs a \[retrievers.{name}\] table"):
        build_retriever(name, RetrieversConfig())


def test_dense_without_a_model_folder_is_a_configuration_error() -> None:
    with pytest.raises(ConfigError, match=r"retrievers\.dense\.model_dir is not set"):
        build_retriever("dense", RetrieversConfig())


def test_settings_tables_reject_unknown_keys_and_bad_values() -> None:
    with pytest.raises(ValidationError, match="extra_forbidden"):
        RetrieversConfig.model_validate({"bm25": {"k_1": 1.2}})
    with pytest.raises(ValidationError, match="less than half of chunk_tokens"):
        Bm25Config(chunk_tokens=100, chunk_overlap=50)
    with pytest.raises(ValidationError, match=r"unknown retriever\(s\) like in weights"):
        HybridConfig(weights={"like": 1.0})
    with pytest.raises(ValidationError, match="at least one weight must be > 0"):
        HybridConfig(weights={"dense": 0.0, "bm25": 0.0})
    with pytest.raises(ValidationError, match="set exactly one of"):
        CustomConfig(python="a:b", command=["x"])
    with pytest.raises(ValidationError, match=r"must look like 'package\.module:factory'"):
        CustomConfig(python="just_a_module")


def test_defaults_are_the_documented_ones() -> None:
    config = RetrieversConfig()
    assert (config.bm25.k1, config.bm25.b, config.bm25.stopwords, config.bm25.stemming) == (
        1.5,
        0.6,
        "en-179",
        True,
    )
    hybrid = config.hybrid
    assert (hybrid.fusion, hybrid.alpha, hybrid.normalisation) == ("convex", 0.7, "theoretical")
    assert (hybrid.depth, hybrid.reranker, hybrid.rerank_depth) == (100, "none", 20)
    assert (hybrid.rrf_k, hybrid.weights) == (60, {"dense": 1.0, "bm25": 1.0})
    assert (config.dense.chunk_tokens, config.dense.chunk_overlap) == (254, 32)


def test_hybrids_dense_side_uses_the_dense_tables_model(
    retrievers_config: RetrieversConfig,
) -> None:
    dense = retrievers_config.dense.model_copy(update={"model": "paraphrase-MiniLM-L3-v2"})
    config = retrievers_config.model_copy(update={"dense": dense})
    hybrid = build_retriever("hybrid", config)
    side = hybrid.sides["dense"]  # type: ignore[attr-defined]
    assert side.spec.name == "paraphrase-MiniLM-L3-v2"
