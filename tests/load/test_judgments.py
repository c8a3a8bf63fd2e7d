"""The judged tier's files: judgments.jsonl read with a FILE:LINE error for each kind of bad
line, written sorted so a new judgment is a one-line diff, a judgment current only while
the judge would be asked the same question; queries.jsonl read in file order."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from retrieval_eval.errors import InputError
from retrieval_eval.load.judgments import (
    Judgment,
    Judgments,
    judgments_text,
    read_judged_queries,
    read_judgments,
    text_sha256,
    write_judgments,
)

PROMPT = text_sha256("Grade this document for the query.")
BREAD = text_sha256("Rest the dough for an hour.")


def judgment(query_id: str, doc_id: str, grade: int, **changes: str) -> Judgment:
    fields: dict[str, Any] = {
        "query_id": query_id,
        "doc_id": doc_id,
        "grade": grade,
        "judge_model": "claude-test",
        "prompt_sha256": PROMPT,
        "doc_sha256": BREAD,
    }
    return Judgment(**(fields | changes))


def record(**changes: object) -> str:
    fields = {
        "query_id": "q1",
        "doc_id": "d1",
        "grade": 2,
        "judge_model": "claude-test",
        "prompt_sha256": PROMPT,
        "doc_sha256": BREAD,
    }
    return json.dumps({k: v for k, v in (fields | changes).items() if v is not ...}) + "\n"


def test_written_sorted_and_read_back(tmp_path: Path) -> None:
    path = tmp_path / "judged" / "judgments.jsonl"
    written = Judgments([judgment("q2", "d1", 0), judgment("q1", "d9", 1), judgment("q1", "d2", 3)])
    write_judgments(path, written)
    lines = path.read_text(encoding="utf-8").splitlines()
    assert [(json.loads(x)["query_id"], json.loads(x)["doc_id"]) for x in lines] == [
        ("q1", "d2"),
        ("q1", "d9"),
        ("q2", "d1"),
    ]
    assert dict(read_judgments(path)) == dict(written)
    assert read_judgments(tmp_path / "none.jsonl") == Judgments()  # no judgment yet


@pytest.mark.parametrize(
    ("line", "message"),
    [
        (record(grade=...), "missing grade; each judgment needs query_id, doc_id, grade, "),
        (record(note="x"), "unknown field 'note'; a judgment has only query_id, doc_id, "),
        (record(doc_id=" "), "doc_id must be a non-empty string"),
        (record(grade=True), "grade must be a whole number ≥ 0 (0 = not relevant), not true"),
        (record(grade=-1), "grade must be a whole number ≥ 0 (0 = not relevant), not -1"),
        (record(grade=1.5), "grade must be a whole number ≥ 0 (0 = not relevant), not 1.5"),
        (record(doc_sha256=BREAD.upper()), "doc_sha256 must be a sha256 in 64 lowercase hex"),
        (record(grade=1), "the pair ('q1', 'd1') is judged twice (first on line 1); keep one"),
    ],
)
def test_a_bad_line_names_file_and_line(tmp_path: Path, line: str, message: str) -> None:
    path = tmp_path / "judgments.jsonl"
    path.write_text(record() + line, encoding="utf-8")
    with pytest.raises(InputError) as caught:
        read_judgments(path)
    assert str(caught.value).startswith(f"{path}:2: {message}")


def test_a_judgment_holds_only_for_the_same_model_prompt_and_text() -> None:
    judged = Judgments([judgment("q1", "d1", 2), judgment("q1", "d2", 0)])
    same = {"model": "claude-test", "prompt_sha256": PROMPT, "doc_sha256": BREAD}
    assert judged.current("q1", "d1", **same) == judgment("q1", "d1", 2)
    assert judged.current("q1", "d1", **(same | {"model": "claude-other"})) is None
    assert judged.current("q1", "d1", **(same | {"doc_sha256": text_sha256("edited")})) is None
    assert judged.current("q1", "d3", **same) is None
    current = judged.current_only(
        model="claude-test", prompt_sha256=PROMPT, doc_sha256={"d1": BREAD}
    )
    assert list(current) == [("q1", "d1")]  # d2 left the corpus


def test_graded_counts_zeros_and_relevant_does_not() -> None:
    judged = Judgments([judgment("q1", "d1", 2), judgment("q1", "d2", 0), judgment("q2", "d1", 1)])
    assert judged.graded("q1") == {"d1": 2, "d2": 0}
    assert judged.relevant("q1") == {"d1": 2}
    assert judged.query_ids() == ("q1", "q2")
    regraded = judged.merged([judgment("q1", "d2", 3)])
    assert regraded.relevant("q1") == {"d1": 2, "d2": 3}
    assert judged.relevant("q1") == {"d1": 2}  # immutable


_ids = st.text(min_size=1, max_size=6).filter(str.strip)


@given(
    st.lists(
        st.builds(
            judgment,
            query_id=_ids,
            doc_id=_ids,
            grade=st.integers(min_value=0, max_value=4),
        ),
        max_size=8,
        unique_by=lambda j: j.pair,
    )
)
def test_any_judgments_read_back_as_written(judgments: list[Judgment]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "judgments.jsonl"
        path.write_text(judgments_text(judgments), encoding="utf-8")
        assert dict(read_judgments(path)) == {j.pair: j for j in judgments}


def test_queries_in_file_order_with_other_fields_ignored(tmp_path: Path) -> None:
    path = tmp_path / "queries.jsonl"
    path.write_text(
        '{"query_id": "b", "query": "salt water", "expected_top_k_ids": ["x"]}\n'
        '{"query_id": "a", "query": "rest dough"}\n',
        encoding="utf-8",
    )
    assert [(q.query_id, q.query) for q in read_judged_queries(path)] == [
        ("b", "salt water"),
        ("a", "rest dough"),
    ]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            '{"query_id": "a", "query": "x"}\n{"query_id": "a", "query": "y"}\n',
            "2: query_id 'a' is used twice (first on line 1)",
        ),
        ('{"query_id": "", "query": "x"}\n', "1: query_id must be a non-empty string"),
        ('{"query_id": "a", "query": " "}\n', "1: query must be a non-empty string"),
    ],
)
def test_a_bad_query_line_names_file_and_line(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "queries.jsonl"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputError) as caught:
        read_judged_queries(path)
    assert str(caught.value).startswith(f"{path}:{message}")


def test_a_missing_queries_file_says_how_to_write_it(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="write it with `retrieval-eval import queries LOG"):
        read_judged_queries(tmp_path / "queries.jsonl")
