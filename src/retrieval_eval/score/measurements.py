"""Turn one dataset's timed search results into measurements (a DatasetReport before gating).

Aggregates are means over the scored queries: a query that returned nothing
scores 0 and stays in the mean, while ``expect_empty`` fixtures are left out
of every mean — they pass or fail on their own negative assertion. Groundedness
is measured only on fixtures with ``expected_keywords``, so its mean is over those.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from itertools import chain, repeat
from operator import attrgetter, itemgetter
from pathlib import Path

from retrieval_eval.load.fixtures import LocatedFixture
from retrieval_eval.results import (
    Aggregate,
    AnnFidelitySummary,
    BreakdownRow,
    CollapseSummary,
    DatasetReport,
    Latency,
    QueryResult,
)
from retrieval_eval.retrieval.base import AnnFidelity
from retrieval_eval.retrieval.search import SearchedDataset
from retrieval_eval.score.breakdown import group_means, group_members
from retrieval_eval.score.groundedness import NEEDS_TEXT, groundedness, hits_lack_text
from retrieval_eval.score.labels import label_coverage, unlabelled_at
from retrieval_eval.score.latency import cost_summary, latency_summary
from retrieval_eval.score.query_scores import score_queries
from retrieval_eval.score.repeats import repeated_measures
from retrieval_eval.score.stats import bootstrap_ci
from retrieval_eval.vocabulary import GROUNDEDNESS


def measure_dataset(
    *,
    path: Path,
    fixtures: Sequence[LocatedFixture],
    searched: SearchedDataset,
    corpus_fingerprint: str,
    measures: Sequence[str],
    seed: int,
    k: int,
) -> DatasetReport:
    timed = searched.timed
    by_id = {t.query_id: t for t in timed}
    scored = [lf for lf in fixtures if not lf.fixture.expect_empty]
    qrels = {lf.fixture.query_id: lf.fixture.grades() for lf in scored}
    rankings = {qid: [hit.doc_id for hit in by_id[qid].result.hits] for qid in qrels}
    per_measure = score_queries(qrels, rankings, list(measures))
    spread = None
    if searched.repeats:  # each query's mean over the repeats is its value
        more = [
            {t.query_id: [hit.doc_id for hit in t.result.hits] for t in r} for r in searched.repeats
        ]
        per_measure, spread = repeated_measures(qrels, [rankings, *more], measures)

    # With repeats, every repeat's hits count: groundedness is their mean and the first
    # relevant rank their median, as the measures are each query's mean over the repeats.
    repeat_ids = [{t.query_id: t for t in run} for run in searched.repeats]
    textless = hits_lack_text(
        [hit.text for hit in by_id[lf.fixture.query_id].result.hits]
        for lf in scored
        if lf.fixture.expected_keywords
    )
    queries = []
    for located in fixtures:
        fixture = located.fixture
        result = by_id[fixture.query_id]
        hits = result.result.hits
        every = [hits, *(run[fixture.query_id].result.hits for run in repeat_ids)]
        metrics: dict[str, float] = {}
        if not fixture.expect_empty:
            metrics = {m: per_measure[m].get(fixture.query_id, 0.0) for m in measures}
            if fixture.expected_keywords and not textless:
                metrics[GROUNDEDNESS] = sum(
                    groundedness(fixture.expected_keywords, [hit.text for hit in each])
                    for each in every
                ) / len(every)
        grades = fixture.grades()
        first = median_rank(
            [
                next((i for i, hit in enumerate(each, 1) if grades.get(hit.doc_id, 0) > 0), None)
                for each in every
            ]
        )
        ids = [hit.doc_id for hit in hits]
        unlabelled = () if fixture.expect_empty else unlabelled_at(ids, grades, k)
        queries.append(
            QueryResult(
                query_id=fixture.query_id,
                query=fixture.query,
                line=located.line,
                query_type=fixture.query_type,
                tags=tuple(fixture.tags or ()),
                ground_truth_source=fixture.ground_truth_source,
                expect_empty=bool(fixture.expect_empty),
                minimum_mrr=fixture.minimum_mrr,
                retrieved=tuple(hit.doc_id for hit in hits),
                first_relevant_rank=None if fixture.expect_empty else first,
                metrics=metrics,
                latency_ms=result.latency_s * 1000.0,
                cost_usd=result.result.cost_usd,
                unlabelled_at_k=None if fixture.expect_empty else len(unlabelled),
                unlabelled_ids=unlabelled,
            )
        )

    latency = latency_summary([t.latency_s for t in timed])
    rerank_seconds = [t.result.rerank_s for t in timed if t.result.rerank_s is not None]
    counts = searched.embedding_counts
    return DatasetReport(
        name=path.name,
        retriever=searched.retriever,
        retriever_config=dict(searched.retriever_config),
        dataset_fingerprint=dataset_fingerprint(fixtures),
        corpus_fingerprint=corpus_fingerprint,
        setup_s=searched.setup_s,
        num_queries=len(queries),
        num_scored=len(scored),
        aggregates=aggregates(queries, [*measures, GROUNDEDNESS], seed=seed),
        # A dataset with no queries cannot pass validation; 0.0 only keeps the model total.
        latency=Latency(
            p50_ms=latency.p50_ms or 0.0,
            p95_ms=latency.p95_ms or 0.0,
            p99_ms=latency.p99_ms or 0.0,
            mean_ms=latency.mean_ms or 0.0,
            count=latency.count,
        ),
        rerank_latency=_latency(rerank_seconds) if rerank_seconds else None,
        cost_per_query_usd=cost_summary([q.cost_usd for q in queries]),
        breakdowns=breakdowns(queries, retrieval_types(fixtures)),
        queries=tuple(queries),
        rows=(),
        failures=(),
        baseline_established=False,
        comparison=None,
        embedded_texts=None if counts is None else counts[0],
        queries_missing=searched.queries_missing,
        cached_embeddings=None if counts is None else counts[1],
        repeats=spread,
        ann_fidelity=_fidelity(searched.ann_fidelity),
        collapse=_collapse(searched.collapse),
        labels=label_coverage(queries, k),
        groundedness_left_out=NEEDS_TEXT if textless else None,
    )


def median_rank(ranks: Sequence[int | None]) -> int | None:
    """The lower median of ``ranks``, a rank one repeat really gave; None (no relevant
    document in the top k) ranks below every number, so it is the median only when at
    least half the repeats found none."""
    ordered = sorted(ranks, key=lambda rank: float("inf") if rank is None else rank)
    return ordered[(len(ordered) - 1) // 2]


def aggregates(
    queries: Sequence[QueryResult], metrics: Sequence[str], *, seed: int
) -> dict[str, Aggregate]:
    """Mean and bootstrap CI of each metric over the queries that have it."""
    result: dict[str, Aggregate] = {}
    per_query = [q.metrics for q in queries]
    for metric in metrics:
        values = _column(per_query, metric)
        if not values:
            continue
        low, high = bootstrap_ci(values, seed=seed)
        result[metric] = Aggregate(
            value=sum(values) / len(values), ci_low=low, ci_high=high, n=len(values)
        )
    return result


def _column(per_query: Sequence[dict[str, float]], metric: str) -> list[float]:
    """``metric``'s value of each query that has it, in order (read at C speed when every
    query has one, the usual case)."""
    values: list[float | None] = list(map(dict.get, per_query, repeat(metric)))
    return [value for value in values if value is not None] if None in values else values  # type: ignore[return-value]


def retrieval_types(fixtures: Sequence[LocatedFixture]) -> dict[str, str]:
    """query id -> its fixture's retrieval_type, the first breakdown dimension."""
    return {lf.fixture.query_id: str(lf.fixture.retrieval_type) for lf in fixtures}


def breakdowns(
    queries: Sequence[QueryResult], retrieval_type: Mapping[str, str]
) -> tuple[BreakdownRow, ...]:
    """Means per retrieval_type, query_type and tag (a query counts once in each of its tags)."""
    scored = [query for query in queries if not query.expect_empty]
    # Most queries share their few groups: each combination's labels are made once, and
    # every query holds its combination's list (group_members relies on the sharing).
    keys = list(
        zip(
            map(retrieval_type.__getitem__, map(attrgetter("query_id"), scored)),
            map(attrgetter("query_type"), scored),
            map(attrgetter("tags"), scored),
            strict=True,
        )
    )
    made = {key: _group_labels(*key) for key in dict.fromkeys(keys)}
    labels = list(map(made.__getitem__, keys))
    sizes = Counter(chain.from_iterable(labels))
    per_query = [query.metrics for query in scored]
    names = list(dict.fromkeys(chain.from_iterable(per_query)))
    means = group_means(
        {name: list(map(dict.get, per_query, repeat(name))) for name in names},
        group_members(labels),
    )
    rows = []
    for label in sorted(sizes, key=_label_order):
        dimension, group = label.split(_LABEL_SEPARATOR, 1)
        metrics = {name: means[name][label] for name in names if label in means[name]}
        rows.append(BreakdownRow(dimension=dimension, group=group, n=sizes[label], metrics=metrics))
    return tuple(rows)


# Group labels are "dimension<TAB>group" strings because score.breakdown groups by string.
_LABEL_SEPARATOR = "\t"
_DIMENSION_ORDER = {"retrieval_type": 0, "query_type": 1, "tag": 2}


def _group_labels(retrieval_type: str, query_type: str | None, tags: Sequence[str]) -> list[str]:
    pairs = [("retrieval_type", retrieval_type)]
    if query_type:
        pairs.append(("query_type", query_type))
    pairs.extend(("tag", tag) for tag in tags)
    joined = (f"{dimension}{_LABEL_SEPARATOR}{group}" for dimension, group in pairs)
    return list(dict.fromkeys(joined))


def _label_order(label: str) -> tuple[int, str]:
    dimension, group = label.split(_LABEL_SEPARATOR, 1)
    return (_DIMENSION_ORDER[dimension], group)


def dataset_fingerprint(fixtures: Sequence[LocatedFixture]) -> str:
    """sha256 over the fixtures' content in query-id order: reformatting a file changes nothing."""
    return fingerprint_of_records(
        (located.fixture.query_id, fixture_record(located)) for located in fixtures
    )


def fixture_record(located: LocatedFixture) -> str:
    """One fixture's share of the dataset fingerprint: its content, keys sorted."""
    record = located.fixture.model_dump(mode="json", exclude_none=True)
    return json.dumps(record, sort_keys=True, ensure_ascii=False)


def fingerprint_of_records(records: Iterable[tuple[str, str]]) -> str:
    """:func:`dataset_fingerprint` from (query id, :func:`fixture_record`) pairs in any
    order: a sharded run's merge gathers each shard's own fixtures' records."""
    ordered = [record for _, record in sorted(records, key=itemgetter(0))]
    if not ordered:
        return hashlib.sha256().hexdigest()
    # One update of the whole text: the digest of each record and newline in turn.
    return hashlib.sha256(("\n".join(ordered) + "\n").encode("utf-8")).hexdigest()


def _fidelity(fidelity: AnnFidelity | None) -> AnnFidelitySummary | None:
    if fidelity is None:
        return None
    return AnnFidelitySummary(
        index=fidelity.index, k=fidelity.k, queries=fidelity.queries, recall=fidelity.recall
    )


def _collapse(counts: Mapping[int, int] | None) -> CollapseSummary | None:
    if counts is None:
        return None
    return CollapseSummary(
        results=sum(n * documents for n, documents in counts.items()),
        documents=sum(counts.values()),
        histogram=dict(sorted(counts.items())),
    )


def _latency(seconds: list[float]) -> Latency:
    summary = latency_summary(seconds)
    return Latency(
        p50_ms=summary.p50_ms or 0.0,
        p95_ms=summary.p95_ms or 0.0,
        p99_ms=summary.p99_ms or 0.0,
        mean_ms=summary.mean_ms or 0.0,
        count=summary.count,
    )
