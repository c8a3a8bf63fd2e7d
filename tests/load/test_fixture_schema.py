"""The fixture model's JSON Schema accepts and refuses what the model does (the committed
schema/fixture.schema.json is checked against it through `retrieval-eval schema`,
tests/commands/test_json_schema.py)."""

from __future__ import annotations

import json
from typing import Any

import jsonschema  # type: ignore[import-untyped]
import pytest
from pydantic import ValidationError

from retrieval_eval.load.fixture_schema import render_fixture_schema
from retrieval_eval.load.fixtures import Fixture

BASE: dict[str, Any] = {
    "query_id": "q1",
    "query": "how long to rest dough",
    "retrieval_type": "semantic",
    "expected_top_k_ids": ["recipes/bread"],
    "ground_truth_source": "synthetic",
}


@pytest.mark.parametrize(
    ("changes", "valid"),
    [
        ({}, True),
        ({"minimum_mrr": 0.5, "tags": ["bread"], "relevance": {"recipes/bread": 3}}, True),
        ({"filters": {"tags": ["recipes"]}, "query_type": "tag_filter"}, True),
        ({"qurey": "x"}, False),
        ({"filters": {"tags": ["a"], "mode": "and"}}, False),
        ({"retrieval_type": "dense"}, False),
        ({"minimum_mrr": 1.01}, False),
        ({"minimum_mrr": "0.5"}, False),
        ({"query": " "}, False),
        ({"relevance": {"recipes/bread": 0}}, False),
        ({"expected_top_k_ids": [""]}, False),
    ],
)
def test_schema_and_model_agree(changes: dict[str, Any], valid: bool) -> None:
    record = {**BASE, **changes}
    schema = json.loads(render_fixture_schema())
    schema_valid = jsonschema.Draft202012Validator(schema).is_valid(record)
    try:
        Fixture.model_validate(record)
        model_valid = True
    except ValidationError:
        model_valid = False
    assert (schema_valid, model_valid) == (valid, valid)
