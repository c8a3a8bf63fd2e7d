"""The golden-dataset fixture model: strict, so a hand-written mistake is reported, and
consistent (expected ids, grades, expect_empty) with a message saying what to fix."""

from __future__ import annotations

import unicodedata
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from retrieval_eval.load.fixtures import Fixture
from retrieval_eval.load.invisible import invisible_chars
from retrieval_eval.load.pydantic_messages import describe_validation_error

BASE: dict[str, Any] = {
    "query_id": "q1",
    "query": "how long to rest dough",
    "retrieval_type": "semantic",
    "expected_top_k_ids": ["recipes/bread"],
    "ground_truth_source": "synthetic",
}


def problem(record: dict[str, Any]) -> str:
    with pytest.raises(ValidationError) as caught:
        Fixture.model_validate(record)
    return describe_validation_error(caught.value, Fixture)


def test_grades_default_to_one() -> None:
    fixture = Fixture.model_validate(
        {**BASE, "expected_top_k_ids": ["a", "b", "c"], "relevance": {"b": 3}}
    )
    assert fixture.grades() == {"a": 1, "b": 3, "c": 1}


def test_filter_tags_are_the_filters_or_none() -> None:
    assert Fixture.model_validate(BASE).filter_tags() == ()
    tagged = Fixture.model_validate({**BASE, "filters": {"tags": ["recipes", "bread"]}})
    assert tagged.filter_tags() == ("recipes", "bread")


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        (
            {"expected_top_k_ids": []},
            "expected_top_k_ids is empty; list at least one id, "
            "or set expect_empty: true if no results is the correct answer",
        ),
        (
            {"expect_empty": True},
            "expect_empty is true but expected_top_k_ids is not empty; "
            "an expected-empty query has no expected ids",
        ),
        ({"expected_top_k_ids": ["a", "b", "a"]}, "expected_top_k_ids lists 'a' more than once"),
        (
            {"relevance": {"recipes/bread": 2, "other": 1}},
            "relevance grades 'other' not listed in expected_top_k_ids; grade only expected ids",
        ),
        ({"query": " \t"}, "field 'query': must not be empty or blank (got \" \\t\")"),
        (
            {"minimum_mrr": "0.7"},
            "field 'minimum_mrr': input should be a valid number (got \"0.7\")",
        ),
        (
            {"expected_top_k_id": ["x"]},
            "unknown field 'expected_top_k_id' (did you mean 'expected_top_k_ids'?)",
        ),
    ],
)
def test_a_hand_written_mistake_says_what_to_fix(changes: dict[str, Any], message: str) -> None:
    assert problem({**BASE, **changes}) == message


def test_an_id_with_an_invisible_character_names_it() -> None:
    assert "U+200B ZERO WIDTH SPACE" in problem({**BASE, "query_id": "q\u200b1"})


_ids = st.text(min_size=1, max_size=10).filter(lambda text: not invisible_chars(text))


@given(
    st.lists(_ids, min_size=1, max_size=6, unique=True),
    st.data(),
)
def test_any_consistent_fixture_round_trips_and_grades_every_expected_id(
    ids: list[str], data: st.DataObject
) -> None:
    ids = list(dict.fromkeys(unicodedata.normalize("NFC", i) for i in ids))
    graded = data.draw(st.lists(st.sampled_from(ids), unique=True))
    grades = {doc_id: data.draw(st.integers(min_value=1, max_value=9)) for doc_id in graded}
    fixture = Fixture.model_validate(
        {**BASE, "expected_top_k_ids": ids, "relevance": grades, "tags": ["t"]}
    )
    assert list(fixture.grades()) == ids
    assert all(fixture.grades()[i] == grades.get(i, 1) for i in ids)
    assert Fixture.model_validate(fixture.model_dump()) == fixture
