"""The words the report uses for labels: the labelled share, the judge's view of one
document, the calibration figures. Registered as template filters (``LABEL_FILTERS``)."""

from __future__ import annotations

from retrieval_eval.results import DatasetReport, Hole, LabelJudgement, QueryMove

# The note beside a regressed query whose first document nobody labelled.
MISSING_LABEL = "possibly a missing label"


def share_text(share: float | None) -> str:
    return "—" if share is None else f"{share * 100:.0f}%"


def judge_view(judgement: LabelJudgement | None) -> str:
    """``judge: relevant, 0.92``; an em dash when the judge did not run."""
    if judgement is None:
        return "—"
    verdict = "relevant" if judgement.relevant else "not relevant"
    return f"judge: {verdict}, {judgement.score:.2f}"


def ranked_first_note(move: QueryMove) -> str:
    """What follows the first-ranked document's id in a regressed query's row."""
    if not move.top_after_unlabelled:
        return ""
    first = next((h for h in move.holes if h.rank == 1), None)
    judged = f"; {judge_view(first.judge)}" if first is not None and first.judge else ""
    return f" · {MISSING_LABEL}{judged}"


def holes_of(dataset: DatasetReport) -> list[tuple[QueryMove, Hole]]:
    """Every regressed query's holes, in the order the queries regressed."""
    if dataset.comparison is None:
        return []
    return [(move, hole) for move in dataset.comparison.regressed_most for hole in move.holes]


def share_note(dataset: DatasetReport) -> str:
    """Beside a dataset's verdict when its labelled share at k fell by more than the limit."""
    labels = dataset.labels
    if labels is None or not labels.dropped:
        return ""
    return (
        f" · ⚠️ labelled at k: {share_text(labels.share)} (was {share_text(labels.baseline_share)})"
    )


def ratio(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f}"


LABEL_FILTERS = {
    "share": share_text,
    "judge_view": judge_view,
    "ranked_first_note": ranked_first_note,
    "holes": holes_of,
    "share_note": share_note,
    "ratio": ratio,
}
