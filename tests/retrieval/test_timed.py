from __future__ import annotations

from collections.abc import Mapping, Sequence

from retrieval_eval.load.documents import Corpus
from retrieval_eval.retrieval.base import SearchResult
from retrieval_eval.retrieval.builtin.like import LikeRetriever
from retrieval_eval.retrieval.config import LikeConfig
from retrieval_eval.retrieval.timed import QuerySpec, TimedResult, run_queries, time_index


class LoggedLike:
    """The LIKE retriever, keeping a log of the searches it was asked for."""

    name = "logged-like"

    def __init__(self) -> None:
        self.inner = LikeRetriever(LikeConfig())
        self.log: list[tuple[str, int, tuple[str, ...]]] = []

    def index(self, corpus: Corpus) -> None:
        self.inner.index(corpus)

    def search(self, query: str, k: int, tags: Sequence[str] = ()) -> SearchResult:
        self.log.append((query, k, tuple(tags)))
        return self.inner.search(query, k, tags)

    def describe(self) -> Mapping[str, object]:
        return self.inner.describe()


QUERIES = [
    QuerySpec("q1", "pesto", ()),
    QuerySpec("q2", "lisbon budget", ("travel",)),
    QuerySpec("q3", "release", ("no-such-tag",)),
]


def test_one_unrecorded_warm_up_then_every_query_in_order(notes: Corpus) -> None:
    retriever = LoggedLike()
    assert time_index(retriever, notes) > 0
    timed = run_queries(retriever, QUERIES, 5)
    assert retriever.log == [
        ("pesto", 5, ()),  # the warm-up
        ("pesto", 5, ()),
        ("lisbon budget", 5, ("travel",)),
        ("release", 5, ("no-such-tag",)),
    ]
    assert [t.query_id for t in timed] == ["q1", "q2", "q3"]
    assert [[h.doc_id for h in t.result.hits] for t in timed] == [
        ["journal/2024-05-02", "recipes/pesto"],
        ["travel/lisbon"],
        [],
    ]
    assert all(0 < t.latency_s < 1 for t in timed)


def test_progress_callback_sees_each_result(notes: Corpus) -> None:
    retriever = LoggedLike()
    retriever.index(notes)
    seen: list[TimedResult] = []
    timed = run_queries(retriever, QUERIES, 5, on_result=seen.append)
    assert seen == timed


def test_no_queries_means_no_searches_at_all(notes: Corpus) -> None:
    retriever = LoggedLike()
    retriever.index(notes)
    assert run_queries(retriever, [], 5) == []
    assert retriever.log == []


def test_on_warm_runs_between_the_warm_up_and_the_recorded_searches(notes: Corpus) -> None:
    """What a collapsing retriever has counted at on_warm is the warm-up alone, so the
    report's counts cover the recorded searches only."""
    retriever = LoggedLike()
    retriever.index(notes)
    searched_at_warm: list[int] = []
    run_queries(retriever, QUERIES, 5, on_warm=lambda: searched_at_warm.append(len(retriever.log)))
    assert searched_at_warm == [1]
    assert len(retriever.log) == 1 + len(QUERIES)
