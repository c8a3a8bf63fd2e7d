"""The timed query loop shared by ``run`` and ``beir``.

Latency is per query, on a warm retriever: the first query pays for lazy
initialisation (ONNX session, caches, JIT), which is setup cost, not what a
user waits for per search — so one warm-up query runs first and is not
recorded. Indexing (and with it model loading) is timed separately as setup.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from retrieval_eval.errors import RetrievalEvalError
from retrieval_eval.load.documents import Corpus
from retrieval_eval.progress import Log, Pace, estimate_line, step
from retrieval_eval.retrieval.base import (
    EstimatesIndexing,
    Retriever,
    SearchResult,
    ShowsIndexProgress,
)


@dataclass(frozen=True)
class QuerySpec:
    query_id: str
    text: str
    tags: tuple[str, ...] = ()


@dataclass(frozen=True)
class TimedResult:
    query_id: str
    result: SearchResult
    latency_s: float


@runtime_checkable
class QueryListRetriever(Protocol):
    """A retriever that answers the whole query list itself: by query id (a run file),
    or with several queries in flight (a search service). It measures each query's
    latency the way ``run_queries`` does and calls ``on_result`` in query order, and
    ``on_warm`` once its unrecorded warm-up is done (at the start when it runs none)."""

    def search_queries(
        self,
        queries: Sequence[QuerySpec],
        k: int,
        *,
        on_result: Callable[[TimedResult], None] | None = None,
        on_warm: Callable[[], None] | None = None,
    ) -> list[TimedResult]: ...


def time_index(retriever: Retriever, corpus: Corpus) -> float:
    """Seconds spent in ``retriever.index(corpus)``: the setup time reported beside latency."""
    started = time.perf_counter()
    retriever.index(corpus)
    return time.perf_counter() - started


def index_with_progress(
    retriever: Retriever,
    corpus: Corpus,
    *,
    interactive: bool,
    log: Log,
    pace: Pace | None = None,
    name: str | None = None,
) -> float:
    """``time_index`` as a progress step: the bar counts the texts a retriever that
    ``ShowsIndexProgress`` embeds, else the documents once it is done. A crash is a run
    error (exit 2) in one line."""
    name = name or retriever.name
    documents = len(corpus.documents)
    with step(
        f"indexing for {name}",
        documents,
        interactive=interactive,
        log=log,
        unit="document",
        pace=pace,
    ) as tracker:
        shows = retriever if isinstance(retriever, ShowsIndexProgress) else None
        if shows is not None:
            shows.set_index_progress(lambda done, total: tracker.update(done, total, "text"))
        estimates = retriever if isinstance(retriever, EstimatesIndexing) else None
        if estimates is not None:
            estimates.set_index_estimate(
                lambda todo, texts, seconds: tracker.note(
                    estimate_line(documents, todo, texts, seconds)
                )
            )
        try:
            seconds = time_index(retriever, corpus)
        except RetrievalEvalError:
            raise
        except Exception as error:
            raise RetrievalEvalError(f"retriever {name!r} failed to index: {error}") from error
        finally:
            if shows is not None:
                shows.set_index_progress(None)
            if estimates is not None:
                estimates.set_index_estimate(None)
        if shows is None:
            tracker.advance(documents)
    return seconds


def run_queries(
    retriever: Retriever,
    queries: Sequence[QuerySpec],
    k: int,
    *,
    on_result: Callable[[TimedResult], None] | None = None,
    on_warm: Callable[[], None] | None = None,
) -> list[TimedResult]:
    """Search every query once, in order; ``on_result`` lets a caller show progress, and
    ``on_warm`` (called once the unrecorded warm-up is done) read counts of the recorded
    searches alone."""
    if not queries:
        return []
    if isinstance(retriever, QueryListRetriever):
        return retriever.search_queries(queries, k, on_result=on_result, on_warm=on_warm)
    return search_one_by_one(retriever, queries, k, on_result=on_result, on_warm=on_warm)


def search_one_by_one(
    retriever: Retriever,
    queries: Sequence[QuerySpec],
    k: int,
    *,
    on_result: Callable[[TimedResult], None] | None = None,
    on_warm: Callable[[], None] | None = None,
) -> list[TimedResult]:
    """One ``search`` per query, each timed on its own, after one unrecorded warm-up."""
    if not queries:
        return []
    warm_up = queries[0]
    retriever.search(warm_up.text, k, warm_up.tags)
    if on_warm is not None:
        on_warm()
    results: list[TimedResult] = []
    for query in queries:
        started = time.perf_counter()
        result = retriever.search(query.text, k, query.tags)
        latency = time.perf_counter() - started
        timed = TimedResult(query.query_id, result, latency)
        results.append(timed)
        if on_result is not None:
            on_result(timed)
    return results
