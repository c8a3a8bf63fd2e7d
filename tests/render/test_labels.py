"""The words the report gives labels: the labelled share, the judge's view of one
document, the note beside a regressed query whose first document nobody labelled, and the
warning when the labelled share fell."""

from __future__ import annotations

from retrieval_eval.render.labels import (
    LABEL_FILTERS,
    MISSING_LABEL,
    holes_of,
    judge_view,
    ranked_first_note,
    ratio,
    share_note,
    share_text,
)
from retrieval_eval.results import Hole, LabelCoverage, LabelJudgement, QueryMove
from tests.render.reports import dataset, query


def move(*, unlabelled: bool, holes: tuple[Hole, ...] = ()) -> QueryMove:
    return QueryMove(
        query_id="q1",
        query="lisbon budget",
        metric="mrr@10",
        baseline=1.0,
        current=0.5,
        rank_before=1,
        rank_after=2,
        top_after="travel/kyoto",
        top_after_unlabelled=unlabelled,
        holes=holes,
    )


def test_shares_ratios_and_the_judge_s_view() -> None:
    assert (share_text(0.834), share_text(None)) == ("83%", "—")
    assert (ratio(0.5), ratio(None)) == ("0.50", "—")
    assert judge_view(LabelJudgement(relevant=True, score=0.918, model="m")) == (
        "judge: relevant, 0.92"
    )
    assert judge_view(LabelJudgement(relevant=False, score=0.1, model="m")) == (
        "judge: not relevant, 0.10"
    )
    assert judge_view(None) == "—"


def test_an_unlabelled_first_document_is_noted_with_the_judge_s_view() -> None:
    judged = Hole(
        doc_id="travel/kyoto", rank=1, judge=LabelJudgement(relevant=True, score=0.8, model="m")
    )
    assert ranked_first_note(move(unlabelled=True, holes=(judged,))) == (
        f" · {MISSING_LABEL}; judge: relevant, 0.80"
    )
    unjudged = Hole(doc_id="travel/kyoto", rank=1)
    assert ranked_first_note(move(unlabelled=True, holes=(unjudged,))) == f" · {MISSING_LABEL}"
    assert ranked_first_note(move(unlabelled=False, holes=(judged,))) == ""


def test_the_holes_of_every_regressed_query_in_order() -> None:
    first = move(unlabelled=True, holes=(Hole(doc_id="a", rank=1), Hole(doc_id="b", rank=3)))
    second = move(unlabelled=False, holes=(Hole(doc_id="c", rank=2),))
    report = dataset([query("q1", "lisbon budget")], moves=[first, second])
    assert [(m.query_id, h.doc_id) for m, h in holes_of(report)] == [
        ("q1", "a"),
        ("q1", "b"),
        ("q1", "c"),
    ]
    assert holes_of(report.model_copy(update={"comparison": None})) == []


def test_a_fallen_labelled_share_is_warned_beside_the_verdict() -> None:
    report = dataset([query("q1", "lisbon budget")])
    fell = LabelCoverage(retrieved=10, labelled=4, share=0.4, baseline_share=0.9, dropped=True)
    held = fell.model_copy(update={"dropped": False})
    assert share_note(report.model_copy(update={"labels": fell})) == (
        " · ⚠️ labelled at k: 40% (was 90%)"
    )
    assert share_note(report.model_copy(update={"labels": held})) == ""
    assert share_note(report) == ""
    assert LABEL_FILTERS["share_note"] is share_note
