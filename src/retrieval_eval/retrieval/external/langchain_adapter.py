"""LangChain: any ``BaseRetriever`` (or a function returning one), asked with ``batch``.

Runs in the factory host (framework.py). The number of results is passed the way the
retriever takes it: ``k`` in a vector store retriever's search arguments, else its own
``k`` field (the BM25 retriever's); a retriever with neither returns what it returns.
A tag filter is passed to a vector store retriever over LangChain's ``InMemoryVectorStore``
as its filter function (documents whose ``tag_key`` metadata list holds ANY of the tags);
every other retriever has no filter LangChain defines, so tags are refused there.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from retrieval_eval.retrieval.external.framework import (
    Framework,
    FrameworkError,
    FrameworkRetriever,
    Result,
)


class LangChain(Framework):
    name = "langchain"
    retriever_type = "langchain_core.retrievers.BaseRetriever"

    def __init__(self) -> None:
        try:
            from langchain_core.retrievers import BaseRetriever
        except ImportError as error:
            raise FrameworkError(
                "langchain-core is not installed where the factory host runs: "
                f"pip install 'retrieval-eval[langchain]' ({error})"
            ) from None
        self._base = BaseRetriever

    def is_retriever(self, candidate: object) -> bool:
        return isinstance(candidate, self._base)

    def prepare(self, retriever: Any, depth: int, tags: Sequence[str], tag_key: str | None) -> Any:
        from langchain_core.vectorstores import InMemoryVectorStore, VectorStoreRetriever

        if isinstance(retriever, VectorStoreRetriever):
            search_kwargs = {**retriever.search_kwargs, "k": depth}
            if tags:
                if not isinstance(retriever.vectorstore, InMemoryVectorStore):
                    raise FrameworkError(
                        _refused(retriever, "its vector store's filter format is its own")
                    )
                if tag_key is None:
                    raise FrameworkError(
                        "a fixture filters by tags: set tag_key to the metadata key holding each "
                        "document's tags (a list)"
                    )
                wanted = frozenset(tags)

                def carries_any(document: Any) -> bool:
                    value = document.metadata.get(tag_key)
                    return isinstance(value, list) and not wanted.isdisjoint(value)

                search_kwargs["filter"] = carries_any
            return retriever.model_copy(update={"search_kwargs": search_kwargs})
        if tags:
            raise FrameworkError(_refused(retriever, "LangChain defines no metadata filter for it"))
        if "k" in type(retriever).model_fields:
            return retriever.model_copy(update={"k": depth})
        return retriever

    def ask(self, retriever: Any, queries: Sequence[str], depth: int) -> list[list[Result]]:
        answers = (
            retriever.batch(list(queries)) if len(queries) > 1 else [retriever.invoke(queries[0])]
        )
        return [
            [
                Result(dict(document.metadata or {}), None, str(document.page_content or ""))
                for document in documents
            ]
            for documents in answers
        ]


def _refused(retriever: Any, why: str) -> str:
    return (
        f"a fixture filters by tags, which cannot be passed to {type(retriever).__name__} ({why}); "
        "remove the filters from this dataset's fixtures, or evaluate it with a vector store "
        "retriever over InMemoryVectorStore"
    )


def adapter(**options: Any) -> FrameworkRetriever:
    """The factory the host calls: ``[retrievers.langchain]``'s settings as options."""
    return FrameworkRetriever(LangChain(), **options)
