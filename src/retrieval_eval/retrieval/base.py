"""The contract every retriever meets, built-in or the user's own.

``Retriever`` is what the run requires. Each optional capability the run makes
use of when a retriever has it is a protocol of its own below; the run asks
with ``isinstance`` (all are ``runtime_checkable`` but ``EmbeddingCounters``,
which is only ever reached through ``CountsEmbeddings``), never by probing for
an attribute. ``timed.QueryListRetriever`` (answering the whole query list at
once) sits beside the query and timed-result types it speaks in.
docs/retrievers.md ("Writing a retriever") says what the run does with each.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
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


@dataclass(frozen=True)
class AnnFidelity:
    """How much of exact search's top ``k`` an approximate index found, on the same stored
    vectors: the mean over ``queries`` of |ANN top k ∩ exact top k| / |exact top k|
    (documents, after chunks collapse; a query whose exact top k is empty is left out).
    ``index`` names the index and where it lives, e.g. "HNSW, postgres"."""

    index: str
    k: int
    queries: int
    recall: float


@runtime_checkable
class MeasuresAnnFidelity(Protocol):
    """Searches an approximate nearest-neighbour index and can also search the same vectors
    exactly (postgres with its index disabled, a Chroma server's vectors fetched): after a
    dataset is searched, the run passes its queries (text, tags) and k, untimed; the
    retriever measures on the sample its settings choose and returns None when it has
    nothing approximate to measure (exact search, keyword only, turned off)."""

    def ann_fidelity(
        self, queries: Sequence[tuple[str, Sequence[str]]], k: int
    ) -> AnnFidelity | None: ...


@runtime_checkable
class Closeable(Protocol):
    """Holds something to release: a child process, a connection, an in-memory
    collection. The run calls ``close`` once, when it is done with the retriever."""

    def close(self) -> None: ...


@runtime_checkable
class ReportsWarnings(Protocol):
    """Has something to say after indexing that does not stop the run (a damaged
    embedding cache it healed): each is logged as a ``warning:`` line."""

    @property
    def warnings(self) -> Sequence[str]: ...


@runtime_checkable
class ReportsMissingQueries(Protocol):
    """Answers queries it was given answers for (a run file): the ids of the queries
    it had nothing for after the last search. The report counts them
    (``queries_missing``), so empty results are not mistaken for a regression."""

    @property
    def queries_missing(self) -> Sequence[str]: ...


@runtime_checkable
class ReportsCollapse(Protocol):
    """Collapses results (chunks) into documents itself (a framework's retriever): how many
    documents it returned with 1, 2, ... results behind them, counted since it was built.
    The run logs each dataset's share after searching it."""

    def collapsed(self) -> Mapping[int, int]: ...


@runtime_checkable
class SearchesMany(Protocol):
    """Answers many queries at once, each exactly as ``search`` would (dense: one
    batched model pass for every query's embedding). Used where nothing is timed per
    query: ``tune`` retrieving each hybrid side's runs."""

    def search_many(
        self, queries: Sequence[tuple[str, Sequence[str]]], k: int
    ) -> Sequence[SearchResult]: ...


class EmbeddingCounters(Protocol):
    """How many texts an embedding function embedded, and how many it found cached."""

    @property
    def texts_embedded(self) -> int: ...

    @property
    def cache_hits(self) -> int: ...


@runtime_checkable
class CountsEmbeddings(Protocol):
    """Embeds with the run's embedding function (dense), whose counters the report shows
    per dataset (texts embedded, cache hits); None until indexed."""

    @property
    def embedding(self) -> EmbeddingCounters | None: ...


@runtime_checkable
class HasReranker(Protocol):
    """Built on the run's other retrievers with a rerank stage of its own (hybrid on the
    pooled dense and bm25): when the run is done, it closes the rerank stage (when that
    is ``Closeable``) and leaves the shared retrievers to be closed on their own."""

    @property
    def reranker(self) -> object | None: ...


# (items done, items in all): what an indexing retriever reports as it goes.
IndexProgress = Callable[[int, int], None]
# Told once, before the bulk of indexing starts: (texts to embed, texts in all, the
# estimated seconds the embedding will take).
IndexEstimate = Callable[[int, int, float], None]


@runtime_checkable
class ShowsIndexProgress(Protocol):
    """Reports how far its indexing is (dense: texts embedded of the chunks to embed), so
    the run's progress bar moves during a long ``index``. The run sets the callback before
    ``index`` and clears it (``None``) after."""

    def set_index_progress(self, progress: IndexProgress | None) -> None: ...


@runtime_checkable
class EstimatesIndexing(Protocol):
    """Says how long its indexing will take before the bulk of it starts (dense: the texts
    not in the embedding cache, timed on a sample of them). Set and cleared like
    ``ShowsIndexProgress``'s callback."""

    def set_index_estimate(self, estimate: IndexEstimate | None) -> None: ...
