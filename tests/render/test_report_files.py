"""report.json's text is exactly the standard library's indented encoding of the report.

report_json_bytes writes it (as UTF-8) with pydantic's serializer (fast) and repairs the few float
spellings that differ; these tests hold it to ``json.dumps(..., indent=2,
ensure_ascii=False)`` for every float and string a report can hold.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from retrieval_eval.render.report_files import QUERY_FLOATS, report_json_bytes, write_report_files
from retrieval_eval.results import BreakdownRow, FixtureFailure, QueryMove, QueryResult, RunReport
from retrieval_eval.trust.redaction import register_secret
from tests.render.reports import dataset, mrr_row, query, report


def stdlib_text(report_: RunReport) -> str:
    return json.dumps(report_.model_dump(mode="json"), indent=2, ensure_ascii=False) + "\n"


def base_report() -> dict[str, Any]:
    queries = [query("q1", "first", rank=1, tags=("a", "b")), query("q2", "second", rank=None)]
    move = QueryMove(
        query_id="q2",
        query="second",
        metric="mrr@10",
        baseline=1.0,
        current=0.0,
        rank_before=1,
        rank_after=None,
        top_after="doc-a",
    )
    failure = FixtureFailure(query_id="q2", query="second", line=2, kind="minimum_mrr", message="m")
    row = BreakdownRow(dimension="tag", group="a", n=1, metrics={"mrr@10": 1.0})
    built = report(
        [
            dataset(
                queries,
                rows=[mrr_row(0.75, 0.5)],
                moves=[move],
                failures=[failure],
                breakdowns=[row],
                added=["q3"],
            )
        ]
    )
    return built.model_dump()


FLOATS = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.floats(min_value=1e-9, max_value=1e-3),
    st.floats(min_value=-1e-3, max_value=-1e-9),
    st.floats(min_value=1e14, max_value=1e18),
    st.sampled_from([0.0, -0.0, 1e-05, 1.5e-05, 9.999e-05, 0.0001, 1e-07, 1e16, 5e-324]),
)
# Any text a fixture, a config or a document id may hold (lone surrogates aside: they
# cannot be written as UTF-8 at all).
TEXT = st.text(st.characters(exclude_categories=["Cs"]), max_size=12)
JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers() | FLOATS | TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3),
    max_leaves=8,
)
FREE_TEXT = {"query", "query_id", "headline", "message", "top_after", "group", "retriever"}


def mutated(value: Any, data: st.DataObject, key: str = "") -> Any:
    if isinstance(value, float):
        return data.draw(FLOATS)
    if isinstance(value, str) and key in FREE_TEXT:
        return data.draw(TEXT)
    if isinstance(value, dict):
        if key == "retriever_config":
            return data.draw(st.dictionaries(TEXT, JSONISH, max_size=3))
        return {k: mutated(v, data, k) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [mutated(v, data, key) for v in value]
    return value


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(st.data())
def test_report_json_is_the_standard_library_encoding(data: st.DataObject) -> None:
    fields = mutated(base_report(), data)
    fields["history"] = data.draw(
        st.dictionaries(TEXT, st.dictionaries(TEXT, st.lists(FLOATS, max_size=3), max_size=2))
    )
    built = RunReport.model_validate(fields)
    assert report_json_bytes(built) == stdlib_text(built).encode("utf-8")


@pytest.mark.parametrize(
    "value",
    [
        1e-05,
        -1.5e-05,
        9.999e-05,
        1e-07,
        2.5e-09,
        1e-10,
        1e16,
        1e22,
        -0.0,
        5e-324,
        1e-4,
        0.1,
        float("nan"),
        float("inf"),
        float("-inf"),
    ],
)
def test_floats_the_serializer_spells_differently_are_written_as_python_does(
    value: float,
) -> None:
    fields = base_report()
    fields["datasets"][0]["queries"][0]["cost_usd"] = value
    fields["datasets"][0]["queries"][0]["metrics"] = {"mrr@10": value}
    fields["datasets"][0]["retriever_config"] = {"weights": [value], "e-1": 0.00001}
    built = RunReport.model_validate(fields)
    text = report_json_bytes(built).decode("utf-8")
    assert text == stdlib_text(built)
    if value == value:  # not NaN
        assert f'"cost_usd": {json.dumps(value)}' in text


def test_every_float_field_of_a_query_is_checked_for_nan_and_infinity() -> None:
    floats = {
        name
        for name, field in QueryResult.model_fields.items()
        if "float" in str(field.annotation) and name != "metrics"
    }
    assert floats == set(QUERY_FLOATS)


def test_a_registered_secret_is_masked_in_every_report_file(tmp_path: Path) -> None:
    secret = "sk-report-secret-7f3a9c2e41"
    register_secret(secret)
    built = RunReport.model_validate(base_report() | {"headline": f"Passed: {secret} →"})
    write_report_files(built, tmp_path)
    for name in ("report.json", "report.md", "report.html"):
        text = (tmp_path / name).read_text(encoding="utf-8")
        assert secret not in text
    assert '"headline": "Passed: *** →"' in (tmp_path / "report.json").read_text(encoding="utf-8")


def test_floats_after_many_hyphens_are_written_as_python_does() -> None:
    fields = base_report()
    fields["datasets"][0]["queries"][0]["query"] = "-" * 25_000 + "e-7"
    fields["datasets"][0]["queries"][0]["cost_usd"] = 1e-07
    fields["datasets"][0]["queries"][1]["cost_usd"] = 2.5e-05
    built = RunReport.model_validate(fields)
    assert report_json_bytes(built) == stdlib_text(built).encode("utf-8")
