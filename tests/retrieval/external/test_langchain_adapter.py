"""LangChain's side of a framework retriever, on real LangChain retrievers: a vector store
retriever over InMemoryVectorStore (our ONNX model behind LangChain's Embeddings) is asked
for ``depth`` results and filtered to documents whose tag list holds ANY of the tags; the
BM25 retriever takes its own ``k`` and refuses tags; each answer is the documents'
metadata and text."""

from __future__ import annotations

from typing import Any

import pytest

from retrieval_eval.retrieval.external.framework import FrameworkError
from retrieval_eval.retrieval.external.langchain_adapter import LangChain
from tests.retrieval.external.framework_notes import langchain_bm25, langchain_vector_store
from tests.retrieval.external.notes_folder import notes_folder


@pytest.fixture(scope="module")
def vector_store(tmp_path_factory: pytest.TempPathFactory) -> Any:
    return langchain_vector_store(corpus=str(notes_folder(tmp_path_factory.mktemp("notes"))))


def test_a_vector_store_retriever_is_asked_for_depth_and_filtered_by_any_tag(
    vector_store: Any,
) -> None:
    framework = LangChain()
    assert framework.is_retriever(vector_store)
    deep = framework.prepare(vector_store, 3, (), "tags")
    [answer] = framework.ask(deep, ["what did the flights cost"], 3)
    assert len(answer) == 3
    assert answer[0].metadata["doc_id"] == "travel/lisbon"
    assert "300 euros" in answer[0].text and answer[0].score is None
    filtered = framework.prepare(vector_store, 4, ("recipes", "japan"), "tags")
    answers = framework.ask(filtered, ["what did the flights cost", "basil"], 4)
    assert [sorted(r.metadata["doc_id"] for r in a) for a in answers] == [
        ["recipes/pesto", "travel/kyoto"]
    ] * 2
    assert vector_store.search_kwargs.get("k") != 3  # the team's retriever is left as it was
    with pytest.raises(FrameworkError, match="set tag_key"):
        framework.prepare(vector_store, 4, ("recipes",), None)


def test_a_retriever_without_a_filter_takes_its_own_k_and_refuses_tags() -> None:
    framework = LangChain()
    bm25 = langchain_bm25()
    prepared = framework.prepare(bm25, 2, (), None)
    assert prepared.k == 2
    assert len(framework.ask(prepared, ["budget travel"], 2)[0]) == 2
    with pytest.raises(FrameworkError, match="cannot be passed to BM25Retriever"):
        framework.prepare(bm25, 2, ("travel",), "tags")
    assert not framework.is_retriever(object())
