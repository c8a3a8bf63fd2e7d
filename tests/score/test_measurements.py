"""One dataset's timed results turned into its measurements: an ``expect_empty`` fixture
is left out of every mean, a query that returned nothing scores 0 and stays in, the
groundedness mean is over the fixtures with keywords, repeats give each query its mean and
the median first rank, the breakdowns group by retrieval type, query type and tag, and the
dataset's fingerprint is its content in query-id order, not its formatting."""

from __future__ import annotations

from pathlib import Path

import pytest

from retrieval_eval.load.fixtures import Fixture, LocatedFixture
from retrieval_eval.retrieval.base import Hit, SearchResult
from retrieval_eval.retrieval.search import SearchedDataset
from retrieval_eval.retrieval.timed import TimedResult
from retrieval_eval.score.measurements import dataset_fingerprint, measure_dataset, median_rank
from retrieval_eval.vocabulary import GROUNDEDNESS

FILE = Path("datasets/notes.jsonl")


def fixture(qid: str, line: int, **fields: object) -> LocatedFixture:
    made: dict[str, object] = {
        "query_id": qid,
        "query": f"query {qid}",
        "retrieval_type": "keyword",
        "ground_truth_source": "human-annotated",
        "expected_top_k_ids": ["lisbon"],
    }
    made.update(fields)
    return LocatedFixture(Fixture.model_validate(made), FILE, line)


FIXTURES = [
    fixture("found", 1, expected_keywords=["300 euros"], tags=["travel"], query_type="budget"),
    fixture("second", 2, tags=["travel", "food"]),
    fixture("silent", 3, retrieval_type="semantic"),
    fixture("none", 4, expected_top_k_ids=[], expect_empty=True),
]


def timed(qid: str, ids: list[str], ms: float = 10.0) -> TimedResult:
    hits = tuple(
        Hit(doc, 1.0 / n, f"{doc}: flights cost 300 euros") for n, doc in enumerate(ids, 1)
    )
    return TimedResult(qid, SearchResult(hits=hits, cost_usd=0.001), ms / 1000)


RESULTS = (
    timed("found", ["lisbon", "kyoto"]),
    timed("second", ["kyoto", "lisbon"]),
    timed("silent", []),
    timed("none", ["pesto"]),
)


def searched(repeats: tuple[tuple[TimedResult, ...], ...] = ()) -> SearchedDataset:
    return SearchedDataset(
        retriever="bm25",
        retriever_config={"retriever": "bm25"},
        setup_s=0.5,
        timed=RESULTS,
        embedding_counts=None,
        repeats=repeats,
    )


def measured(repeats: tuple[tuple[TimedResult, ...], ...] = ()) -> object:
    return measure_dataset(
        path=FILE,
        fixtures=FIXTURES,
        searched=searched(repeats),
        corpus_fingerprint="c1",
        measures=["mrr@10"],
        seed=1,
        k=10,
    )


def test_the_means_and_what_each_query_counts_for() -> None:
    report = measured()
    assert (report.name, report.num_queries, report.num_scored) == ("notes.jsonl", 4, 3)
    by_id = {q.query_id: q for q in report.queries}
    assert by_id["found"].metrics == {"mrr@10": 1.0, GROUNDEDNESS: 1.0}
    assert by_id["second"].metrics == {"mrr@10": 0.5}
    assert by_id["silent"].metrics == {"mrr@10": 0.0}  # nothing returned: 0, and counted
    assert by_id["none"].metrics == {}  # expect_empty: in no mean
    assert report.aggregates["mrr@10"].value == pytest.approx(0.5)
    assert (report.aggregates[GROUNDEDNESS].value, report.aggregates[GROUNDEDNESS].n) == (1.0, 1)
    assert [by_id[q].first_relevant_rank for q in ("found", "second", "silent", "none")] == [
        1,
        2,
        None,
        None,
    ]
    assert by_id["second"].unlabelled_ids == ("kyoto",)
    assert by_id["none"].unlabelled_at_k is None
    assert report.labels is not None and report.labels.share == pytest.approx(2 / 4)
    assert report.cost_per_query_usd == pytest.approx(0.001)
    rows = {(r.dimension, r.group): (r.n, r.metrics.get("mrr@10")) for r in report.breakdowns}
    assert rows == {
        ("retrieval_type", "keyword"): (2, 0.75),
        ("retrieval_type", "semantic"): (1, 0.0),
        ("query_type", "budget"): (1, 1.0),
        ("tag", "food"): (1, 0.5),
        ("tag", "travel"): (2, 0.75),
    }


def test_repeats_give_each_query_its_mean_and_the_median_first_rank() -> None:
    second = (
        timed("found", ["kyoto", "lisbon"]),
        timed("second", ["kyoto", "lisbon"]),
        timed("silent", []),
        timed("none", []),
    )
    third = (
        timed("found", ["kyoto", "pesto", "lisbon"]),
        *second[1:],
    )
    report = measured((second, third))
    found = next(q for q in report.queries if q.query_id == "found")
    assert found.metrics["mrr@10"] == pytest.approx((1 + 1 / 2 + 1 / 3) / 3)
    assert found.first_relevant_rank == 2  # ranks 1, 2, 3: the median
    assert report.repeats is not None and report.repeats.runs == 3
    assert report.repeats.varied == {"mrr@10": 1}
    assert median_rank([None, 3, None]) is None and median_rank([None, 3]) == 3


def test_the_fingerprint_is_the_content_in_query_id_order() -> None:
    shuffled = [FIXTURES[2], FIXTURES[0], FIXTURES[3], FIXTURES[1]]
    moved = [LocatedFixture(f.fixture, Path("elsewhere.jsonl"), f.line + 10) for f in shuffled]
    assert dataset_fingerprint(moved) == dataset_fingerprint(FIXTURES)
    changed = [fixture("found", 1, expected_top_k_ids=["kyoto"]), *FIXTURES[1:]]
    assert dataset_fingerprint(changed) != dataset_fingerprint(FIXTURES)
