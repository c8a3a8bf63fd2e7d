"""The geometry of report.html's charts: each shared query once (a moved one from the
comparison, an unmoved one from this run; new and expect_empty ones left out), inside the
plot, at the same place on every run; at most MAX_POINTS drawn, the moved ones first; and
every query's first relevant rank in the bucket its move names."""

from __future__ import annotations

import pytest

from retrieval_eval.render.charts import (
    MAX_POINTS,
    RANK_BUCKETS,
    SCATTER_SIZE,
    QueryChange,
    query_changes,
    rank_bucket,
    rank_histogram,
    scatter,
)
from retrieval_eval.results import DatasetReport, QueryMove, RunReport
from tests.render.reports import dataset, query, report


def move(
    qid: str, before: float, after: float, rank_before: int | None, rank_after: int | None
) -> QueryMove:
    return QueryMove(
        query_id=qid,
        query=f"query {qid}",
        metric="mrr@10",
        baseline=before,
        current=after,
        rank_before=rank_before,
        rank_after=rank_after,
    )


def made() -> tuple[RunReport, DatasetReport]:
    queries = [
        query("down", "went down", rank=2),
        query("up", "went up", rank=1),
        query("same", "did not move", rank=3),
        query("new", "added since", rank=1),
        query("gone", "lost it", rank=None),
    ]
    one = dataset(
        queries,
        moves=[
            move("down", 1.0, 0.5, 1, 2),
            move("gone", 0.5, 0.0, 2, None),
            move("up", 0.2, 1.0, 5, 1),
        ],
        added=["new"],
    )
    return report([one]), one


def test_each_shared_query_once_moved_from_the_comparison_unmoved_from_this_run() -> None:
    run, one = made()
    changes = {c.query_id: c for c in query_changes(run, one)}
    assert sorted(changes) == ["down", "gone", "same", "up"]  # "new" was added since
    assert changes["down"][3:7] == (1.0, 0.5, 1, 2)
    assert changes["same"][3:8] == (1 / 3, 1 / 3, 3, 3, True)  # MRR unchanged: rank unchanged
    assert [rank_bucket(changes[q]) for q in ("down", "gone", "same", "up")] == [
        "down 1",
        "lost",
        "same rank",
        "up 2–4",
    ]
    assert query_changes(run, one.model_copy(update={"comparison": None})) == []


def test_the_scatter_counts_every_query_and_draws_inside_the_plot_the_same_each_run() -> None:
    run, one = made()
    plot = scatter(run, one)
    assert plot is not None
    assert (plot.improved, plot.regressed, plot.unchanged, plot.left_out) == (1, 2, 1, 0)
    assert all(0 <= p.x <= SCATTER_SIZE and 0 <= p.y <= SCATTER_SIZE for p in plot.points)
    assert plot == scatter(run, one)
    [down] = [p for p in plot.points if p.title[0].startswith("down")]
    assert down.title == (
        "down (untyped): went down",
        "MRR@10 1.000 → 0.500",
        "first relevant rank 1 → 2",
    )


def test_a_large_report_draws_the_moved_queries_first() -> None:
    unmoved = [QueryChange(f"q{n}", "q", "t", 0.5, 0.5, 2, 2, True) for n in range(MAX_POINTS)]
    moved = [QueryChange(f"m{n}", "q", "t", 0.5, 1.0, 2, 1, True) for n in range(10)]
    run, one = made()
    plot = scatter(run, one, unmoved + moved)
    assert plot is not None and len(plot.points) == MAX_POINTS and plot.left_out == 10
    assert sum(p.title[1].endswith("→ 1.000") for p in plot.points) == 10


@pytest.mark.parametrize(
    ("known", "before", "after", "bucket"),
    [
        (False, 3, 1, "score unchanged"),
        (True, None, None, "not found in either run"),
        (True, None, 4, "found now"),
        (True, 9, 1, "up 5 or more"),
        (True, 1, 5, "down 2–4"),
        (True, 1, 9, "down 5 or more"),
    ],
)
def test_each_move_has_its_bucket(
    known: bool, before: int | None, after: int | None, bucket: str
) -> None:
    assert rank_bucket(QueryChange("q", "q", "t", 0.0, 0.0, before, after, known)) == bucket
    assert bucket in RANK_BUCKETS


def test_the_histogram_leaves_out_empty_buckets_best_first() -> None:
    run, one = made()
    bars = rank_histogram(run, one)
    assert [(b.label, b.count, b.width) for b in bars] == [
        ("up 2–4", 1, 1.0),
        ("same rank", 1, 1.0),
        ("down 1", 1, 1.0),
        ("lost", 1, 1.0),
    ]
    assert [b.colour for b in bars] == ["#1a7f37", "#8c959f", "#cf222e", "#cf222e"]
    assert rank_histogram(run, one, []) == ()
