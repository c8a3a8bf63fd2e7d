"""Hand-built reports for rendering tests (the pipeline tests build real ones)."""

from __future__ import annotations

from collections.abc import Sequence

from retrieval_eval.results import (
    Aggregate,
    BreakdownRow,
    Comparison,
    DatasetReport,
    Environment,
    FixtureFailure,
    Latency,
    MetricRow,
    PairedTest,
    QueryMove,
    QueryResult,
    RunReport,
)

ENVIRONMENT = Environment(
    platform="Linux-6.1-x86_64",
    python="3.11.2",
    retrieval_eval="0.1.0",
    chromadb="1.5.0",
    onnxruntime="1.23.2",
    model_sha256="e61cbfc7",
    dense_model="all-MiniLM-L6-v2 (auto: 10,000 documents or fewer)",
    git_commit="0123abcd",
)


def query(qid: str, text: str, *, rank: int | None = 1, tags: Sequence[str] = ()) -> QueryResult:
    mrr = 0.0 if rank is None else 1.0 / rank
    return QueryResult(
        query_id=qid,
        query=text,
        line=1,
        tags=tuple(tags),
        ground_truth_source="human-annotated",
        retrieved=("doc-a", "doc-b"),
        first_relevant_rank=rank,
        metrics={"mrr@10": mrr},
        latency_ms=2.0,
        cost_usd=0.0,
    )


def dataset(
    queries: Sequence[QueryResult],
    *,
    rows: Sequence[MetricRow] = (),
    moves: Sequence[QueryMove] = (),
    failures: Sequence[FixtureFailure] = (),
    breakdowns: Sequence[BreakdownRow] = (),
    added: Sequence[str] = (),
    removed: Sequence[str] = (),
    name: str = "hybrid.jsonl",
) -> DatasetReport:
    mean = sum(q.metrics["mrr@10"] for q in queries) / max(1, len(queries))
    return DatasetReport(
        name=name,
        retriever="hybrid",
        retriever_config={"retriever": "hybrid"},
        dataset_fingerprint="d1",
        corpus_fingerprint="c1",
        setup_s=1.25,
        num_queries=len(queries),
        num_scored=len(queries),
        aggregates={
            "mrr@10": Aggregate(value=mean, ci_low=mean - 0.1, ci_high=mean, n=len(queries))
        },
        latency=Latency(p50_ms=2.0, p95_ms=3.5, p99_ms=4.0, mean_ms=2.2, count=len(queries)),
        cost_per_query_usd=0.0,
        breakdowns=tuple(breakdowns),
        queries=tuple(queries),
        rows=tuple(rows),
        failures=tuple(failures),
        baseline_established=False,
        comparison=Comparison(
            common_queries=len(queries),
            added=tuple(added),
            removed=tuple(removed),
            added_text={qid: f"added {qid}" for qid in added},
            removed_text={qid: f"removed {qid}" for qid in removed},
            dataset_changed=bool(added or removed),
            corpus_changed=False,
            retriever_changed=False,
            paired=(
                PairedTest(
                    metric="mrr@10",
                    n_common=len(queries),
                    mean_diff=-0.05,
                    ci_low=-0.12,
                    ci_high=0.01,
                    p_value=0.2,
                ),
            ),
            regressed_most=tuple(moves),
            improved_most=(),
        ),
    )


def report(datasets: Sequence[DatasetReport], *, headline: str = "Passed: fine") -> RunReport:
    return RunReport(
        verdict="passed",
        headline=headline,
        status_description=headline[:139],
        tolerance=0.05,
        measures=("mrr@10",),
        k=10,
        baseline_path="baseline.json",
        baseline_written=False,
        datasets=tuple(datasets),
        environment=ENVIRONMENT,
        baseline_environment=ENVIRONMENT,
        duration_s=1.5,
    )


def mrr_row(baseline: float, current: float, status: str = "ok") -> MetricRow:
    delta = current - baseline
    return MetricRow(
        metric="mrr@10",
        baseline=baseline,
        current=current,
        delta=delta,
        delta_pct=100 * delta / baseline,
        threshold="≥ 0.75",
        gated=True,
        status=status,  # type: ignore[arg-type]
    )
