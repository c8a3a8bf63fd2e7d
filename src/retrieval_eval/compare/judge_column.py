"""The judge column of a dataset: judged now, carried over from the baseline, or dropped.

Judge scores are not deterministic and cost money, so a judge-disabled run may
show the baseline's scores, but only while every query still retrieves exactly
the text that was judged (``carry_over_scores``); otherwise the column goes and
the report says why. ``expect_empty`` fixtures are not judged: they have no
answer to support, just as they are left out of every other mean.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from retrieval_eval.compare.baseline import BaselineDataset
from retrieval_eval.progress import Log
from retrieval_eval.results import Aggregate, DatasetReport, JudgeSummary, QueryResult
from retrieval_eval.score.judge import ClaudeJudge, carry_over_scores, judged_fingerprint
from retrieval_eval.vocabulary import JUDGE

# query id -> the ranked (doc id, chunk text) passages it retrieved
Passages = Mapping[str, Sequence[tuple[str, str]]]

DROPPED_NOTE = "judge scores dropped: retrieved text changed; run with the judge to refresh"


def with_fingerprints(report: DatasetReport, passages: Passages) -> DatasetReport:
    """Record what each judged query retrieved, so a later run can tell if it drifted."""
    queries = tuple(
        q
        if q.expect_empty
        else q.model_copy(update={"judge_fingerprint": judged_fingerprint(passages[q.query_id])})
        for q in report.queries
    )
    return report.model_copy(update={"queries": queries})


def judge_report(
    report: DatasetReport, passages: Passages, judge: ClaudeJudge, log: Log
) -> DatasetReport:
    """One judge call per scored query; a ``JudgeError`` propagates and fails the run."""
    report = with_fingerprints(report, passages)
    queries: list[QueryResult] = []
    total = 0.0
    for q in report.queries:
        if q.expect_empty:
            queries.append(q)
            continue
        judged = judge.judge(q.query_id, q.query, passages[q.query_id])
        total += judged.cost_usd
        queries.append(
            q.model_copy(update={"judge_score": judged.score, "judge_cost_usd": judged.cost_usd})
        )
    log(f"{report.name}: judged {len(queries)} queries with {judge.model} (${total:.4f})")
    summary = JudgeSummary(
        source="judged",
        model=judge.model,
        cost_usd=total,
        note=f"judged by {judge.model}; LLM scores are not deterministic and are not gated "
        f"by default; judge cost ${total:.4f} (not part of the retrieval cost per query)",
    )
    return _with_scores(report, tuple(queries), summary)


def carry_over(report: DatasetReport, previous: BaselineDataset | None) -> DatasetReport:
    """A judge-disabled run: the baseline's scores if nothing drifted, else no column."""
    recorded = _recorded_scores(previous)
    if not recorded:
        return report
    current = {q.query_id: q.judge_fingerprint for q in report.queries if not q.expect_empty}
    kept = carry_over_scores(recorded, {qid: fp for qid, fp in current.items() if fp is not None})
    if kept is None or None in current.values():
        summary = JudgeSummary(source="dropped", model=None, cost_usd=0.0, note=DROPPED_NOTE)
        return report.model_copy(update={"judge": summary})
    queries = tuple(
        q if q.query_id not in kept else q.model_copy(update={"judge_score": kept[q.query_id]})
        for q in report.queries
    )
    summary = JudgeSummary(
        source="carried-over",
        model=None,
        cost_usd=0.0,
        note="judge scores carried over from the baseline: every query retrieved exactly the "
        "text that was judged",
    )
    return _with_scores(report, queries, summary)


def _recorded_scores(previous: BaselineDataset | None) -> dict[str, tuple[str, float]]:
    if previous is None or previous.queries is None:
        return {}
    return {
        qid: (q.judge_fingerprint, q.judge_score)
        for qid, q in previous.queries.items()
        if q.judge_fingerprint is not None and q.judge_score is not None
    }


def _with_scores(
    report: DatasetReport, queries: tuple[QueryResult, ...], summary: JudgeSummary
) -> DatasetReport:
    scores = [q.judge_score for q in queries if q.judge_score is not None]
    aggregates = dict(report.aggregates)
    if scores:
        aggregates[JUDGE] = Aggregate(value=sum(scores) / len(scores), n=len(scores))
    return report.model_copy(
        update={"queries": queries, "aggregates": aggregates, "judge": summary}
    )
