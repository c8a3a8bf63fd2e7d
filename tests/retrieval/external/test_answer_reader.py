"""Reading one large JSON answer line without building every hit: whatever the line, it
reads as ``json.loads`` reads it, except that a ``hits`` array (or the ``ids``, ``scores``
and ``texts`` columns) went hit by hit to the query's ``TopHits`` and stands in the answer
as a ``Streamed`` marker; malformed text is the same ``JSONDecodeError``."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from retrieval_eval.errors import RetrievalEvalError
from retrieval_eval.retrieval.answers import TopHits
from retrieval_eval.retrieval.base import Hit
from retrieval_eval.retrieval.external.answer_reader import read_answer, read_batch
from retrieval_eval.retrieval.external.search_answer import Streamed

WHO = "custom retriever `x`"

_scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text()
_json = st.recursive(
    _scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner),
    max_leaves=12,
)
_hit = st.fixed_dictionaries(
    {"id": st.sampled_from("abcdef"), "score": st.floats(-3, 3)},
    optional={"text": st.text(max_size=3)},
)


def expected(value: Any) -> Any:
    """What ``read_answer`` leaves of a decoded answer: the hits and the columns (when ids
    and scores are both arrays of one length) as markers."""
    if not isinstance(value, dict):
        return value
    out = dict(value)
    if isinstance(out.get("hits"), list):
        out["hits"] = Streamed()
    for key in ("ids", "scores", "texts"):
        if isinstance(out.get(key), list):
            out[key] = Streamed(len(out[key]))
    return out


def lengths(answer: Any) -> Any:
    if isinstance(answer, dict):
        return {k: getattr(v, "length", None) for k, v in answer.items()}
    return None


@given(_json, st.sampled_from(["", " ", "\n\t "]))
def test_any_json_value_reads_as_json_loads_reads_it(value: Any, space: str) -> None:
    line = space + json.dumps(value, indent=1 if space else None) + space
    top = TopHits(3, who=WHO)
    try:
        read = read_answer(line, top)
    except RetrievalEvalError as error:  # hits (or columns) that are not hits
        assert isinstance(value, dict) and ("hits" in value or "ids" in value)
        assert str(error).startswith(WHO)
        return
    assert read == expected(value)
    assert lengths(read) == lengths(expected(value))


@given(
    st.lists(_hit, max_size=8),
    st.dictionaries(st.sampled_from(["cost_usd", "note", "next"]), _json, max_size=3),
    st.booleans(),
)
def test_hits_and_columns_reach_top_hits_as_the_decoded_answer_would(
    hits: list[dict[str, Any]], rest: dict[str, Any], columns: bool
) -> None:
    if columns:
        answer: dict[str, Any] = {
            "ids": [h["id"] for h in hits],
            "scores": [h["score"] for h in hits],
            "texts": [h.get("text", "") for h in hits],
        }
    else:
        answer = {"hits": hits}
    answer.update(rest)
    streamed = TopHits(3, who=WHO)
    read_answer(json.dumps(answer), streamed)
    whole = TopHits(3, who=WHO)
    for position, hit in enumerate(hits):
        whole.add(position, Hit(hit["id"], hit["score"], hit.get("text", "")))
    assert streamed.result(0.0) == whole.result(0.0)


@pytest.mark.parametrize(
    "line",
    [
        '{"hits": [{"id": "a", "score": 1}',
        '{"hits": [{"id": "a", "score": 1},]}',
        '{"hits": []} trailing',
        '{"ids": ["a" "b"], "scores": [1, 2]}',
        "{'hits': []}",
        '{"hits" []}',
        '{"hits": [], }',
        "",
        "[1, 2",
    ],
)
def test_malformed_text_is_the_error_json_loads_gives(line: str) -> None:
    with pytest.raises(json.JSONDecodeError) as loads:
        json.loads(line)
    with pytest.raises(json.JSONDecodeError) as read:
        read_answer(line, TopHits(3, who=WHO))
    assert read.value.msg == loads.value.msg


def test_a_batch_line_feeds_each_answer_to_its_own_query() -> None:
    tops = {n: TopHits(2, who=f"query {n}") for n in range(3)}
    line = json.dumps(
        {
            "answers": [
                {"hits": [{"id": "a", "score": 1.0}, {"id": "b", "score": 2.0}]},
                {"ids": ["c"], "scores": [0.5]},
                "not an answer",
            ]
        }
    )
    read = read_batch(line, tops[0], tops.__getitem__)
    assert read["answers"][2] == "not an answer"  # left for the caller to name
    assert [h.doc_id for h in tops[0].result(0.0).hits] == ["b", "a"]
    assert [h.doc_id for h in tops[1].result(0.0).hits] == ["c"]
    # Without "answers" the line is the first query's answer alone.
    alone = TopHits(2, who="query 0")
    read_batch('{"hits": [{"id": "z", "score": 0}]}', alone, tops.__getitem__)
    assert [h.doc_id for h in alone.result(0.0).hits] == ["z"]


def test_columns_of_different_lengths_are_left_for_the_caller_to_name() -> None:
    top = TopHits(3, who=WHO)
    read = read_answer('{"ids": ["a", "b"], "scores": [1.0], "texts": ["x", "y"]}', top)
    assert (read["ids"].length, read["scores"].length, read["texts"].length) == (2, 1, 2)
    assert top.result(0.0).hits == ()
