"""LlamaIndex: any ``BaseRetriever`` (or a function returning one), asked with ``retrieve``.

Runs in the factory host (framework.py). A vector index retriever is given the number of
results (``similarity_top_k``) and a tag filter as LlamaIndex metadata filters (ANY of
the tags in the ``tag_key`` list); any other retriever returns what it returns, and a tag
filter is refused there.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

from retrieval_eval.retrieval.external.framework import (
    Framework,
    FrameworkError,
    FrameworkRetriever,
    Result,
)


class LlamaIndex(Framework):
    name = "llamaindex"
    retriever_type = "llama_index.core.retrievers.BaseRetriever"

    def __init__(self) -> None:
        try:
            from llama_index.core.retrievers import BaseRetriever
        except ImportError as error:
            raise FrameworkError(
                "llama-index-core is not installed where the factory host runs: "
                f"pip install 'retrieval-eval[llamaindex]' ({error})"
            ) from None
        self._base = BaseRetriever

    def is_retriever(self, candidate: object) -> bool:
        return isinstance(candidate, self._base)

    def prepare(self, retriever: Any, depth: int, tags: Sequence[str], tag_key: str | None) -> Any:
        from llama_index.core.retrievers import VectorIndexRetriever
        from llama_index.core.vector_stores import FilterOperator, MetadataFilter, MetadataFilters

        if not isinstance(retriever, VectorIndexRetriever):
            if tags:
                raise FrameworkError(
                    f"a fixture filters by tags, which cannot be passed to "
                    f"{type(retriever).__name__} (only a vector index retriever takes metadata "
                    "filters); remove the filters from this dataset's fixtures"
                )
            return retriever
        prepared = copy.copy(retriever)
        prepared.similarity_top_k = depth
        if tags:
            if tag_key is None:
                raise FrameworkError(
                    "a fixture filters by tags: set tag_key to the metadata key holding each "
                    "node's tags (a list)"
                )
            prepared._filters = MetadataFilters(
                filters=[MetadataFilter(key=tag_key, value=list(tags), operator=FilterOperator.ANY)]
            )
        return prepared

    def ask(self, retriever: Any, queries: Sequence[str], depth: int) -> list[list[Result]]:
        return [
            [
                Result(dict(found.node.metadata or {}), found.score, str(found.node.get_content()))
                for found in retriever.retrieve(query)
            ]
            for query in queries
        ]


def adapter(**options: Any) -> FrameworkRetriever:
    """The factory the host calls: ``[retrievers.llamaindex]``'s settings as options."""
    return FrameworkRetriever(LlamaIndex(), **options)
