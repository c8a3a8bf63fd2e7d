"""Each per-line problem class: a broken line in, the exact FILE:LINE: message out."""

from __future__ import annotations

from pathlib import Path

import pytest

from retrieval_eval.validate import validate_datasets
from tests.validate.dataset_builders import fixture, line, write_dataset

GOOD = line(fixture("sem-001"))


def problems_for(tmp_path: Path, broken: str) -> list[str]:
    path = write_dataset(tmp_path / "semantic.jsonl", [GOOD, broken])
    report = validate_datasets([path], corpus=None, min_fixtures=0, min_human=0)
    return [str(problem) for problem in report.problems]


@pytest.mark.parametrize(
    ("broken", "message"),
    [
        pytest.param(
            '{"query_id": "sem-002",\n',
            "not valid JSON: Expecting property name enclosed in double quotes (column 24)",
            id="invalid-json",
        ),
        pytest.param(
            line(fixture("sem-002")).replace("\n", "\r") + line(fixture("sem-003")),
            "not valid JSON: Extra data (column 159); the line holds a lone \\r (old Mac line "
            "endings?): end lines with \\n",
            id="lone-cr",
        ),
        pytest.param(
            '["sem-002"]\n',
            "not a JSON object (got an array); each line must be one {...} object",
            id="not-an-object",
        ),
        pytest.param(
            line({k: v for k, v in fixture("sem-002").items() if k != "ground_truth_source"}),
            "missing required field 'ground_truth_source'",
            id="missing-field",
        ),
        pytest.param(
            line(fixture("sem-002", minimum_mrr="0.8")),
            "field 'minimum_mrr': input should be a valid number (got \"0.8\")",
            id="wrong-type",
        ),
        pytest.param(
            line(fixture("sem-002", expected_top_k_ids="doc-a")),
            "field 'expected_top_k_ids': input should be a valid list (got \"doc-a\")",
            id="wrong-type-list",
        ),
        pytest.param(
            line(fixture("sem-002", minimum_mrr=1.5)),
            "field 'minimum_mrr': input should be less than or equal to 1 (got 1.5)",
            id="mrr-out-of-range",
        ),
        pytest.param(
            line(fixture("sem-002", expected_top_k_id=["doc-a"])),
            "unknown field 'expected_top_k_id' (did you mean 'expected_top_k_ids'?)",
            id="unknown-field-typo",
        ),
        pytest.param(
            line(fixture("sem-002", colour="red")),
            "unknown field 'colour'; allowed fields are answer_context, expect_empty, "
            "expected_keywords, expected_top_k_ids, filters, ground_truth_source, "
            "minimum_mrr, query, query_id, query_type, relevance, retrieval_type, tags",
            id="unknown-field",
        ),
        pytest.param(
            line(fixture("sem-002", filters={"tags": []})),
            "field 'filters.tags': list should have at least 1 item after validation, not 0 "
            "(got [])",
            id="filters-no-tags",
        ),
        pytest.param(
            line(fixture("sem-002", retrieval_type="dense")),
            "field 'retrieval_type': input should be 'semantic', 'keyword' or 'hybrid' (got "
            '"dense")',
            id="invalid-retrieval-type",
        ),
        pytest.param(
            line(fixture("sem-002", retrieval_type="keyword")),
            "retrieval_type is 'keyword' but semantic.jsonl holds 'semantic' fixtures; move "
            "the fixture to keyword.jsonl or fix retrieval_type",
            id="type-does-not-match-file",
        ),
        pytest.param(
            line(fixture("sem-002", query="   ")),
            "field 'query': must not be empty or blank (got \"   \")",
            id="empty-query",
        ),
        pytest.param(
            line(fixture("sem-002", ground_truth_source="human")),
            "field 'ground_truth_source': input should be 'human-annotated' or 'synthetic' "
            '(got "human")',
            id="bad-source",
        ),
        pytest.param(
            line(fixture("sem-002", expected_top_k_ids=[])),
            "expected_top_k_ids is empty; list at least one id, or set expect_empty: true if "
            "no results is the correct answer",
            id="no-expected-ids",
        ),
        pytest.param(
            line(fixture("sem-002", expect_empty=True)),
            "expect_empty is true but expected_top_k_ids is not empty; an expected-empty "
            "query has no expected ids",
            id="expect-empty-with-ids",
        ),
        pytest.param(
            line(fixture("sem-002", relevance={"doc-z": 2})),
            "relevance grades 'doc-z' not listed in expected_top_k_ids; grade only expected ids",
            id="relevance-not-expected",
        ),
        pytest.param(
            line(fixture("sem-002", relevance={"doc-a": 0})),
            "field 'relevance.doc-a': input should be greater than or equal to 1 (got 0)",
            id="relevance-grade-zero",
        ),
        pytest.param(
            line(fixture("sem-002", expected_top_k_ids=["doc-a", "doc-a"])),
            "expected_top_k_ids lists 'doc-a' more than once",
            id="duplicate-expected-id",
        ),
        pytest.param(
            line(fixture("sem-001")),
            "duplicate query_id 'sem-001' (first defined at {path}:1)",
            id="duplicate-query-id",
        ),
        pytest.param(
            '{"query_id": "a", "query_id": "b"}\n',
            "duplicate key 'query_id' in the JSON object",
            id="duplicate-key",
        ),
    ],
)
def test_one_broken_line(tmp_path: Path, broken: str, message: str) -> None:
    path = tmp_path / "semantic.jsonl"
    assert problems_for(tmp_path, broken) == [f"{path}:2: " + message.replace("{path}", str(path))]


def test_every_problem_on_every_line_is_reported(tmp_path: Path) -> None:
    path = write_dataset(
        tmp_path / "keyword.jsonl",
        [
            "not json\n",
            line(
                {
                    "query_id": "k1",
                    "retrieval_type": "keyword",
                    "filters": {"tag": ["x"]},
                    "tgas": [],
                }
            ),
            GOOD.replace("semantic", "keyword"),
        ],
    )
    report = validate_datasets([path], corpus=None, min_fixtures=0, min_human=0)
    assert [str(problem) for problem in report.problems] == [
        f"{path}:1: not valid JSON: Expecting value (column 1)",
        f"{path}:2: missing required field 'query'",
        f"{path}:2: missing required field 'expected_top_k_ids'",
        f"{path}:2: missing required field 'ground_truth_source'",
        f"{path}:2: missing required field 'filters.tags'",
        f"{path}:2: unknown field 'filters.tag' (did you mean 'tags'?)",
        f"{path}:2: unknown field 'tgas' (did you mean 'tags'?)",
    ]


def test_unreadable_lines_are_problems_not_crashes(tmp_path: Path) -> None:
    path = tmp_path / "semantic.jsonl"
    path.write_bytes(GOOD.encode() + b'{"query": "caf\xe9"}\n')
    report = validate_datasets([path], corpus=None, min_fixtures=0, min_human=0)
    assert [str(p) for p in report.problems] == [
        f"{path}:2: invalid UTF-8 at byte 15 of the line; save the file as UTF-8"
    ]


def test_bom_crlf_blank_lines_and_no_final_newline_are_accepted(tmp_path: Path) -> None:
    path = tmp_path / "semantic.jsonl"
    second = GOOD.replace("sem-001", "sem-002").strip()
    path.write_bytes(b"\xef\xbb\xbf" + GOOD.strip().encode() + b"\r\n\r\n  \r\n" + second.encode())
    report = validate_datasets([path], corpus=None, min_fixtures=2, min_human=2)
    assert report.problems == []
    assert [(f.fixture.query_id, f.line) for f in report.datasets[path]] == [
        ("sem-001", 1),
        ("sem-002", 4),
    ]
