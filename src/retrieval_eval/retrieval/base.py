"""The contract every retriever meets, built-in or the user's own."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from retrieval_eval.load.documents import Corpus


@dataclass(frozen=True)
class Hit:
    """One ranked document. ``text`` is the best-matching chunk (or the whole
    document for document-level retrievers): groundedness and the judge read it."""

    doc_id: str
    score: float
    text: str


@dataclass(frozen=True)
class SearchResult:
    """What one query returned. ``cost_usd`` is what the query cost, for systems
    that pay per call (built-in retrievers cost nothing). ``rerank_s`` is the
    seconds a rerank stage took, inside the query's latency, reported on its own
    (None: no rerank stage). ``score_ceiling`` is the highest score any document
    could have reached for this query, where the scoring function bounds it (BM25:
    Σ idf of the query's terms); hybrid fusion's theoretical normalisation divides
    by it (None: not known)."""

    hits: tuple[Hit, ...]
    cost_usd: float = 0.0
    rerank_s: float | None = None
    score_ceiling: float | None = None


@runtime_checkable
class Retriever(Protocol):
    """Index once, then answer queries.

    ``search`` returns at most ``k`` unique documents, best first, ties broken by
    document id ascending so results are deterministic. ``tags`` restricts results
    to documents carrying ANY of the tags; when no document carries any of them
    the result is empty — never an unfiltered search.
    """

    name: str

    def index(self, corpus: Corpus) -> None: ...

    def search(self, query: str, k: int, tags: Sequence[str] = ()) -> SearchResult: ...

    def describe(self) -> Mapping[str, object]:
        """Configuration that changes results (recorded in the baseline)."""
        ...
