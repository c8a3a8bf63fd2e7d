"""A user's own retriever as a Python factory (``tests.retrieval.own_retriever:make``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from retrieval_eval.load.documents import Corpus
from retrieval_eval.retrieval.base import Hit, SearchResult


class TitleSearch:
    """Scores a document 1 per query word in its title; ``broken`` makes search fail."""

    name = "title-search"

    def __init__(self, boost: float, broken: bool) -> None:
        self.boost = boost
        self.broken = broken
        self.titles: dict[str, str] = {}

    def index(self, corpus: Corpus) -> None:
        self.titles = {doc.id: doc.title.lower() for doc in corpus.documents}

    def search(self, query: str, k: int, tags: Sequence[str] = ()) -> SearchResult:
        if self.broken:
            raise KeyError("shard 3")
        words = query.lower().split()
        hits = [
            Hit(doc_id, self.boost * sum(w in title for w in words), title)
            for doc_id, title in self.titles.items()
            if any(w in title for w in words)
        ]
        return SearchResult(hits=tuple(hits), cost_usd=0.5)

    def describe(self) -> Mapping[str, object]:
        return {"boost": self.boost}


def make(boost: float = 1.0, broken: bool = False) -> TitleSearch:
    return TitleSearch(boost, broken)


def not_a_retriever() -> object:
    return object()
