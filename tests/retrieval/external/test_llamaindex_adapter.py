"""LlamaIndex's side of a framework retriever, on real LlamaIndex retrievers: a vector
index retriever (our ONNX model behind LlamaIndex's BaseEmbedding) is asked for ``depth``
results, with its own scores, and filtered to nodes whose tag list holds ANY of the tags;
a retriever that takes no metadata filter refuses tags."""

from __future__ import annotations

from typing import Any

import pytest

from retrieval_eval.retrieval.external.framework import FrameworkError
from retrieval_eval.retrieval.external.llamaindex_adapter import LlamaIndex
from tests.retrieval.external.framework_notes import llamaindex_summary, llamaindex_vector_store
from tests.retrieval.external.notes_folder import notes_folder


@pytest.fixture(scope="module")
def vector_index(tmp_path_factory: pytest.TempPathFactory) -> Any:
    return llamaindex_vector_store(corpus=str(notes_folder(tmp_path_factory.mktemp("notes"))))


def test_a_vector_index_retriever_is_asked_for_depth_and_filtered_by_any_tag(
    vector_index: Any,
) -> None:
    framework = LlamaIndex()
    assert framework.is_retriever(vector_index)
    deep = framework.prepare(vector_index, 3, (), "tags")
    [answer] = framework.ask(deep, ["what did the flights cost"], 3)
    assert len(answer) == 3
    assert answer[0].metadata["doc_id"] == "travel/lisbon"
    assert answer[0].score is not None and answer[0].score >= answer[1].score  # type: ignore[operator]
    filtered = framework.prepare(vector_index, 4, ("recipes", "japan"), "tags")
    [answer] = framework.ask(filtered, ["what did the flights cost"], 4)
    assert sorted(r.metadata["doc_id"] for r in answer) == ["recipes/pesto", "travel/kyoto"]
    assert vector_index.similarity_top_k != 3  # the team's retriever is left as it was
    with pytest.raises(FrameworkError, match="set tag_key"):
        framework.prepare(vector_index, 4, ("recipes",), None)


def test_a_retriever_without_metadata_filters_refuses_tags() -> None:
    framework = LlamaIndex()
    summary = llamaindex_summary()
    assert framework.prepare(summary, 2, (), None) is summary
    with pytest.raises(FrameworkError, match="only a vector index retriever takes metadata"):
        framework.prepare(summary, 2, ("travel",), "tags")
