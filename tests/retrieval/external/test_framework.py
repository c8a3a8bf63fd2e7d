"""framework.py in-process, over real LangChain and LlamaIndex retrievers built from a few
documents with several chunks each (no model: LangChain's BM25 retriever, a LlamaIndex
summary index): chunks collapse to documents by the built-in rule, scores come from the
framework or the rank, a full answer too short in documents is asked again deeper, and the
id key is checked."""

from __future__ import annotations

from typing import Any

import pytest

from retrieval_eval.load.documents import Corpus, Document
from retrieval_eval.retrieval.external.framework import FrameworkError, FrameworkRetriever
from retrieval_eval.retrieval.external.langchain_adapter import LangChain
from retrieval_eval.retrieval.external.llamaindex_adapter import LlamaIndex

CHUNKS = [
    ("wing", "flutter of a swept wing", ["aero"]),
    ("wing", "wing flutter in wind tunnel tests", ["aero"]),
    ("wing", "the wing root and its bending", ["aero"]),
    ("shell", "buckling of thin shells", ["structures"]),
    ("shell", "thin shells under axial load", ["structures"]),
    ("heat", "heat transfer in a boundary layer", ["thermal"]),
]
CORPUS = Corpus(
    documents=tuple(Document(id=doc, title=doc, text=doc) for doc in ("heat", "shell", "wing")),
    location="chunks",
)
THIS_MODULE = "tests.retrieval.external.test_framework"


def bm25(k: int = 4) -> Any:
    from langchain_community.retrievers import BM25Retriever
    from langchain_core.documents import Document as LangChainDocument

    return BM25Retriever.from_documents(
        [
            LangChainDocument(page_content=text, metadata={"doc_id": doc, "tags": tags})
            for doc, text, tags in CHUNKS
        ],
        k=k,
    )


def summary() -> Any:
    from llama_index.core import SummaryIndex
    from llama_index.core.schema import TextNode

    nodes = [TextNode(text=text, metadata={"doc_id": doc}) for doc, text, _ in CHUNKS]
    return SummaryIndex(nodes).as_retriever()


def _retriever(framework: Any, attribute: str, **keys: Any) -> FrameworkRetriever:
    retriever = FrameworkRetriever(
        framework, object=f"{THIS_MODULE}:{attribute}", id_key=keys.pop("id_key", "doc_id"), **keys
    )
    retriever.index(CORPUS)
    return retriever


def test_chunks_collapse_to_documents_ranked_by_their_best_chunk() -> None:
    retriever = _retriever(LangChain(), "bm25")
    [result] = retriever.search_many([("wing flutter", ())], 3)
    ids = [hit.doc_id for hit in result.hits]
    assert ids[0] == "wing"
    assert len(ids) == len(set(ids)) == 3  # asked deeper until three documents came back
    assert result.hits[0].text in {text for doc, text, _ in CHUNKS if doc == "wing"}
    # BM25Retriever gives no score: 1 / rank of the document's best chunk
    assert result.hits[0].score == 1.0
    assert [hit.score for hit in result.hits] == sorted(
        (hit.score for hit in result.hits), reverse=True
    )
    assert sum(retriever.collapsed().values()) == 3


def test_a_score_key_is_read_where_set_and_the_framework_s_score_otherwise() -> None:
    retriever = _retriever(LlamaIndex(), "summary")
    [result] = retriever.search_many([("anything", ())], 3)
    # A summary index returns every node, in order, without scores: ranks then.
    assert [hit.doc_id for hit in result.hits] == ["wing", "shell", "heat"]
    assert [hit.score for hit in result.hits] == [1.0, 1 / 4, 1 / 6]


def test_a_result_without_the_id_key_names_the_query_and_its_keys() -> None:
    retriever = _retriever(LangChain(), "bm25", id_key="source")
    with pytest.raises(FrameworkError) as caught:
        retriever.search("thin shells", 2)
    assert str(caught.value) == (
        "result 1 for the query 'thin shells' has no metadata key 'source' (its keys: "
        "doc_id, tags); set id_key to the key holding the corpus document id"
    )


def test_tags_are_refused_where_the_retriever_takes_no_filter() -> None:
    retriever = _retriever(LangChain(), "bm25")
    with pytest.raises(FrameworkError, match="cannot be passed to BM25Retriever"):
        retriever.search("thin shells", 2, ("structures",))
    with pytest.raises(FrameworkError, match="cannot be passed to SummaryIndexRetriever"):
        _retriever(LlamaIndex(), "summary").search("thin shells", 2, ("structures",))


def test_an_object_that_is_no_retriever_is_named() -> None:
    with pytest.raises(FrameworkError, match=r"CHUNKS is a list, not a langchain_core"):
        FrameworkRetriever(LangChain(), object=f"{THIS_MODULE}:CHUNKS", id_key="doc_id")
    with pytest.raises(FrameworkError, match=r"summary\(\.\.\.\) returned a SummaryIndexRetriever"):
        FrameworkRetriever(LangChain(), object=f"{THIS_MODULE}:summary", id_key="doc_id")
