"""What the golden sets miss, beside the gate: the labelled share against the baseline's,
and the unlabelled documents that newly entered a regressed query's top k (holes).

All of it is informational. A dataset whose labelled share at k fell by more than
``LABEL_SHARE_DROP_POINTS`` says so beside its verdict, and a regressed query whose
new first document is unlabelled is marked "possibly a missing label", but neither
changes a row, a check or the verdict: only a person adds a label (`review --holes`).
"""

from __future__ import annotations

from operator import attrgetter

from retrieval_eval.compare.baseline import BaselineDataset
from retrieval_eval.results import DatasetReport, Hole, QueryMove, QueryResult

# A labelled share this many percentage points below the baseline's is worth a note.
LABEL_SHARE_DROP_POINTS = 10.0
_EPSILON = 1e-9


def with_label_notes(report: DatasetReport, baseline: BaselineDataset | None) -> DatasetReport:
    """The report with the share compared to the baseline's and the regressed queries'
    holes marked; nothing the gate decided changes."""
    update: dict[str, object] = {}
    labels = report.labels
    if labels is not None and baseline is not None and baseline.labelled_share is not None:
        drop = None if labels.share is None else (baseline.labelled_share - labels.share) * 100.0
        update["labels"] = labels.model_copy(
            update={
                "baseline_share": baseline.labelled_share,
                "dropped": drop is not None and drop > LABEL_SHARE_DROP_POINTS + _EPSILON,
            }
        )
    comparison = report.comparison
    if comparison is not None and baseline is not None and baseline.queries is not None:
        queries = report.queries
        by_id = dict(zip(map(attrgetter("query_id"), queries), queries, strict=True))
        recorded = baseline.queries
        moves = tuple(
            _with_holes(
                move,
                by_id[move.query_id],
                recorded[move.query_id].retrieved if move.query_id in recorded else None,
            )
            for move in comparison.regressed_most
        )
        update["comparison"] = comparison.model_copy(update={"regressed_most": moves})
    return report.model_copy(update=update) if update else report


def _with_holes(move: QueryMove, query: QueryResult, before: tuple[str, ...] | None) -> QueryMove:
    """Holes: unlabelled documents in this run's top k that the baseline's top k did not
    hold. A baseline that did not record its top k (written by an older version) has the
    unlabelled documents ranked above this run's first relevant one instead: those are
    what pushed it down."""
    unlabelled = set(query.unlabelled_ids)
    stop = query.first_relevant_rank - 1 if query.first_relevant_rank else len(query.retrieved)
    holes = tuple(
        Hole(doc_id=doc_id, rank=rank)
        for rank, doc_id in enumerate(query.retrieved, start=1)
        if doc_id in unlabelled and (doc_id not in before if before is not None else rank <= stop)
    )
    # "Possibly a missing label" only when the first document is new in the top k and
    # unjudged: one the baseline already ranked there did not make this query regress.
    first_unlabelled = any(hole.rank == 1 for hole in holes)
    return move.model_copy(update={"holes": holes, "top_after_unlabelled": first_unlabelled})
