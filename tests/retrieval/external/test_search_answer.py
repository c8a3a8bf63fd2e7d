"""Reading one query's answer: hit objects or columns, parsed whole or streamed.

Whatever the values (ids that are not text, scores that are NaN, booleans or integers
beyond any float, texts that are not text), every form and way of reading gives what
checking the hits one at a time with ``TopHits`` gives: the same best ``k``, or the
same error.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from retrieval_eval.errors import RetrievalEvalError
from retrieval_eval.retrieval.answers import TopHits
from retrieval_eval.retrieval.base import Hit, SearchResult
from retrieval_eval.retrieval.external.answer_reader import read_answer, read_batch
from retrieval_eval.retrieval.external.search_answer import make_hit, search_result

WHO = "custom retriever `x`: answer to `search` for query 'q'"


def _who() -> str:
    return WHO


_ids = st.sampled_from(["a", "b", "c", "d", "e"]) | st.text(max_size=2) | st.integers() | st.none()
_scores = (
    st.floats(-5, 5)
    | st.sampled_from([1.0, 2.0, 0.5])
    | st.floats()
    | st.integers(-(10**20), 10**20)
    | st.just(10**400)
    | st.booleans()
    | st.text(max_size=2)
)
_texts = st.text(max_size=3) | st.none() | st.integers()
# Answers that pass (many ties, duplicate documents, integer scores) and ones that do not.
_good = st.tuples(
    st.sampled_from(["a", "b", "c", "d", "e"]),
    st.sampled_from([1.0, 2.0, 0.5, 2, 0]) | st.floats(-5, 5),
    st.sampled_from(["", "x"]),
)
_any = st.tuples(_ids, _scores, _texts)
_hits = st.lists(_good, max_size=12) | st.lists(_good | _any, max_size=12)
_costs = st.floats(0, 1) | st.just(0) | st.floats() | st.just(-1) | st.booleans()


def _reference(hits: list[tuple[Any, Any, Any]], k: int, cost: object) -> SearchResult | str:
    """Hit objects checked one at a time, as before columns existed."""
    top = TopHits(k, who=WHO)
    try:
        for position, (doc_id, score, text) in enumerate(hits):
            top.add_answer(position, {"id": doc_id, "score": score, "text": text})
        return top.result(cost)
    except RetrievalEvalError as error:
        return str(error)


def _forms(hits: list[tuple[Any, Any, Any]], cost: object, texts: bool) -> list[dict[str, Any]]:
    objects = [{"id": i, "score": s, **({"text": t} if texts else {})} for i, s, t in hits]
    columns: dict[str, Any] = {"ids": [i for i, _, _ in hits], "scores": [s for _, s, _ in hits]}
    if texts:
        columns["texts"] = [t for _, _, t in hits]
    return [{"hits": objects, "cost_usd": cost}, {**columns, "cost_usd": cost}]


def _outcome(job: Any) -> SearchResult | str:
    try:
        return job()  # type: ignore[no-any-return]
    except RetrievalEvalError as error:
        return str(error)


def _streamed(line: str, k: int) -> SearchResult | str:
    top = TopHits(k, who=WHO)
    return _outcome(lambda: search_result(read_answer(line, top), k, _who, top))


@given(_hits, st.integers(1, 5), _costs, st.booleans())
def test_every_form_and_reading_agrees_with_checking_hit_by_hit(
    hits: list[tuple[Any, Any, Any]], k: int, cost: object, texts: bool
) -> None:
    if not texts:
        hits = [(i, s, "") for i, s, _ in hits]
    expected = _reference(hits, k, cost)
    for form in _forms(hits, cost, texts):
        assert _outcome(lambda form=form: search_result(form, k, _who)) == expected
        line = json.dumps(form)
        assert _outcome(lambda line=line: search_result(json.loads(line), k, _who)) == expected
        assert _streamed(line, k) == expected


@given(st.lists(st.tuples(_hits, st.booleans()), min_size=1, max_size=4), st.integers(1, 3))
def test_a_batch_line_read_streaming_agrees_with_each_answer_parsed_whole(
    batch: list[tuple[list[tuple[Any, Any, Any]], bool]], k: int
) -> None:
    answers = [_forms(hits, 0.0, True)[1 if columns else 0] for hits, columns in batch]
    expected = [_outcome(lambda a=answer: search_result(a, k, _who)) for answer in answers]
    tops: dict[int, TopHits] = {}

    def top_of(position: int) -> TopHits:
        return tops.setdefault(position, TopHits(k, who=WHO))

    try:
        read = read_batch(json.dumps({"answers": answers}), top_of(0), top_of)
    except RetrievalEvalError as error:
        # A bad hit is refused as it is read, so before earlier answers are checked.
        assert str(error) in expected
        return
    for position, streamed in enumerate(read["answers"]):
        top = tops.get(position)
        outcome = _outcome(lambda s=streamed, t=top: search_result(s, k, _who, t))
        assert outcome == expected[position]


def test_columns_are_ordered_by_score_ties_by_id_each_document_once() -> None:
    answer = {"ids": ["b", "a", "c", "a"], "scores": [1.0, 1.0, 3, 0.5], "cost_usd": 0.25}
    result = search_result(answer, 10, _who)
    assert [(hit.doc_id, hit.score, hit.text) for hit in result.hits] == [
        ("c", 3.0, ""),
        ("a", 1.0, ""),
        ("b", 1.0, ""),
    ]
    assert result.cost_usd == 0.25
    assert [hit.doc_id for hit in search_result(answer, 2, _who).hits] == ["c", "a"]


@pytest.mark.parametrize(
    ("answer", "message"),
    [
        (
            {"ids": ["a", "b"], "scores": [1.0]},
            f"{WHO} has 2 ids and 1 scores; each hit needs one of each",
        ),
        (
            {"ids": ["a"], "scores": [1.0], "texts": []},
            f"{WHO} has 1 ids and 1 scores and 0 texts; each hit needs one of each",
        ),
        (
            {"ids": ["a", "b"], "scores": [1.0, float("nan")]},
            f"{WHO}: hit 1 (b) has score nan; scores must be finite numbers",
        ),
        ({"ids": ["a", ""], "scores": [1.0, 2.0]}, f"{WHO}: hit 1 has no document id (got '')"),
        (
            {"ids": "a", "scores": [1.0]},
            f"{WHO}: `ids` and `scores` must be lists, got text and a list",
        ),
        ({"hits": [], "ids": []}, f"{WHO} has both `hits` and `ids`/`scores`/`texts`"),
        ({"results": []}, f"{WHO} lacks a `hits` list (or `ids` and `scores` lists)"),
    ],
    ids=["lengths", "texts-length", "nan", "empty-id", "not-a-list", "both", "neither"],
)
def test_a_bad_answer_is_an_error_naming_the_retriever_and_query(
    answer: dict[str, Any], message: str
) -> None:
    with pytest.raises(RetrievalEvalError) as caught:
        search_result(answer, 10, _who)
    assert str(caught.value).startswith(message)
    assert _streamed(json.dumps(answer), 10) == str(caught.value)


def test_the_hits_made_for_a_checked_answer_are_ordinary_hits() -> None:
    made, ordinary = make_hit("a", 1.5, "text"), Hit("a", 1.5, "text")
    assert type(made) is Hit
    assert (made, hash(made), repr(made)) == (ordinary, hash(ordinary), repr(ordinary))
    with pytest.raises(dataclasses.FrozenInstanceError):
        made.score = 2.0  # type: ignore[misc]
