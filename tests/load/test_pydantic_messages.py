"""pydantic's validation errors as one-line messages a person editing JSONL can act on:
the field's path, what was wrong, the value given, and for a typo the field meant."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from retrieval_eval.load.pydantic_messages import (
    describe_validation_error,
    validation_error_messages,
)


class Filters(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    tags: list[str] = Field(min_length=1)


class Record(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    id: str
    title: str
    score: float = 0.0
    filters: Filters | None = None
    notes: dict[str, Any] = Field(default_factory=dict)

    @field_validator("title")
    @classmethod
    def _title(cls, value: str) -> str:
        if value == "TODO":
            raise ValueError("Must be a real title")
        return value


def messages(record: object) -> list[str]:
    with pytest.raises(ValidationError) as caught:
        Record.model_validate(record)
    return validation_error_messages(caught.value, Record)


@pytest.mark.parametrize(
    ("record", "expected"),
    [
        ({"title": "t"}, ["missing required field 'id'"]),
        (
            {"id": "a", "title": "t", "titel": "x"},
            ["unknown field 'titel' (did you mean 'title'?)"],
        ),
        (
            {"id": "a", "title": "t", "zzz": 1},
            ["unknown field 'zzz'; allowed fields are filters, id, notes, score, title"],
        ),
        (
            {"id": "a", "title": "t", "filters": {"tags": ["x"], "tgas": []}},
            ["unknown field 'filters.tgas' (did you mean 'tags'?)"],
        ),
        (
            {"id": "a", "title": "t", "notes": {"x": 1}, "filters": {"tags": [1]}},
            ["field 'filters.tags[0]': input should be a valid string (got 1)"],
        ),
        ({"id": "a", "title": "TODO"}, ["field 'title': must be a real title (got \"TODO\")"]),
        (
            {"id": "a", "title": "t", "score": "x" * 100},
            [f"field 'score': input should be a valid number (got \"{'x' * 58}…)"],
        ),
        (["not", "an", "object"], ["Input should be a valid dictionary or instance of Record"]),
    ],
)
def test_each_problem_reads_as_what_to_fix(record: object, expected: list[str]) -> None:
    assert messages(record) == expected


def test_every_problem_is_listed_in_the_order_found_and_joined_in_one_line() -> None:
    with pytest.raises(ValidationError) as caught:
        Record.model_validate({"titel": "x", "score": "high"})
    assert describe_validation_error(caught.value, Record) == (
        "missing required field 'id'; missing required field 'title'; "
        "field 'score': input should be a valid number (got \"high\"); "
        "unknown field 'titel' (did you mean 'title'?)"
    )


@given(
    st.dictionaries(
        st.text(max_size=12),
        st.one_of(st.none(), st.integers(), st.text(max_size=80), st.lists(st.integers())),
        max_size=6,
    )
)
def test_any_record_gives_one_short_line_per_problem(record: dict[str, Any]) -> None:
    try:
        Record.model_validate(record)
    except ValidationError as error:
        found = validation_error_messages(error, Record)
        assert len(found) == error.error_count()
        for message in found:
            assert message and "\n" not in message
            assert "Extra inputs are not permitted" not in message
            assert len(message) < 200 + max((len(k) for k in record), default=0)
