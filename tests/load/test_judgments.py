"""The judged tier's files: judgments read back as written, sorted for small diffs; a stale
judgment (other model, prompt or document text) is not current; every bad line is an
InputError naming its line."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from retrieval_eval.errors import InputError
from retrieval_eval.load.judgments import (
    Judgment,
    Judgments,
    read_judged_queries,
    read_judgments,
    text_sha256,
    write_judgments,
)

PROMPT = text_sha256("prompt")
TEXT = text_sha256("document text")

ids = st.text(min_size=1, max_size=12).filter(lambda s: s.strip() != "")
hashes = st.text(alphabet="0123456789abcdef", min_size=64, max_size=64)
judgments = st.builds(
    Judgment,
    query_id=ids,
    doc_id=ids,
    grade=st.integers(min_value=0, max_value=4),
    judge_model=ids,
    prompt_sha256=hashes,
    doc_sha256=hashes,
)


def judgment(query_id: str = "q1", doc_id: str = "d1", **changes: object) -> Judgment:
    fields: dict[str, object] = {
        "query_id": query_id,
        "doc_id": doc_id,
        "grade": 1,
        "judge_model": "m",
        "prompt_sha256": PROMPT,
        "doc_sha256": TEXT,
    }
    fields.update(changes)
    return Judgment(**fields)  # type: ignore[arg-type]


@given(st.lists(judgments, max_size=20))
def test_judgments_read_back_as_written_and_sorted(written: list[Judgment]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "judged" / "judgments.jsonl"
        collection = Judgments(written)
        write_judgments(path, collection)
        read = read_judgments(path)
        lines = path.read_text(encoding="utf-8").split("\n")[:-1]
    assert dict(read) == dict(collection)
    pairs = [(json.loads(line)["query_id"], json.loads(line)["doc_id"]) for line in lines]
    assert pairs == sorted(pairs)


@given(st.text(max_size=300))
def test_any_line_reads_or_is_an_error_at_its_line(line: str) -> None:
    good = json.dumps(judgment().__dict__)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "judgments.jsonl"
        path.write_text(good + "\n" + line.replace("\n", " ") + "\n", encoding="utf-8")
        try:
            read = read_judgments(path)
        except InputError as error:
            assert error.line == 2
            assert error.file == str(path)
        else:
            assert len(read) in (1, 2)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"grade": -1}, "grade must be a whole number ≥ 0 (0 = not relevant), not -1"),
        ({"grade": 1.5}, "grade must be a whole number ≥ 0"),
        ({"grade": True}, "grade must be a whole number ≥ 0"),
        ({"doc_id": ""}, "doc_id must be a non-empty string"),
        ({"prompt_sha256": "abc"}, "prompt_sha256 must be a sha256 in 64 lowercase hex digits"),
        ({"doc_sha256": TEXT.upper()}, "doc_sha256 must be a sha256"),
        ({"extra": 1}, "unknown field 'extra'"),
    ],
)
def test_a_bad_field_names_its_line(
    tmp_path: Path, change: dict[str, object], message: str
) -> None:
    record = {**judgment().__dict__, **change}
    path = tmp_path / "judgments.jsonl"
    path.write_text(
        json.dumps(judgment("q0").__dict__) + "\n\n" + json.dumps(record) + "\n", encoding="utf-8"
    )
    with pytest.raises(InputError) as raised:
        read_judgments(path)
    assert raised.value.line == 3
    assert message in raised.value.message


def test_a_missing_field_and_a_pair_given_twice_are_errors(tmp_path: Path) -> None:
    path = tmp_path / "judgments.jsonl"
    record = judgment().__dict__
    path.write_text(json.dumps({k: v for k, v in record.items() if k != "grade"}) + "\n")
    with pytest.raises(InputError, match="missing grade; each judgment needs query_id"):
        read_judgments(path)
    path.write_text(json.dumps(record) + "\n" + json.dumps({**record, "grade": 0}) + "\n")
    with pytest.raises(InputError) as raised:
        read_judgments(path)
    assert raised.value.line == 2
    assert "('q1', 'd1') is judged twice (first on line 1)" in raised.value.message


def test_a_missing_file_is_no_judgment_yet(tmp_path: Path) -> None:
    assert len(read_judgments(tmp_path / "absent.jsonl")) == 0


def test_a_judgment_is_current_only_for_the_same_model_prompt_and_text() -> None:
    collection = Judgments([judgment(), judgment(doc_id="d2", grade=0)])
    now = {"model": "m", "prompt_sha256": PROMPT, "doc_sha256": TEXT}
    assert collection.current("q1", "d1", **now) == judgment()
    assert collection.current("q1", "d3", **now) is None
    assert collection.current("q1", "d1", **{**now, "model": "other"}) is None
    assert collection.current("q1", "d1", **{**now, "prompt_sha256": TEXT}) is None
    assert collection.current("q1", "d1", **{**now, "doc_sha256": PROMPT}) is None


def test_relevant_counts_grades_above_zero_of_current_judgments() -> None:
    changed = text_sha256("another text")
    collection = Judgments(
        [
            judgment(doc_id="d1", grade=2),
            judgment(doc_id="d2", grade=0),
            judgment(doc_id="d3", grade=1, doc_sha256=changed),
            judgment(doc_id="gone", grade=1),
        ]
    )
    assert collection.relevant("q1") == {"d1": 2, "d3": 1, "gone": 1}
    assert collection.graded("q1") == {"d1": 2, "d2": 0, "d3": 1, "gone": 1}
    # d3's text changed since, and "gone" is no longer in the corpus: neither is current.
    current = collection.current_only(
        model="m", prompt_sha256=PROMPT, doc_sha256={"d1": TEXT, "d2": TEXT, "d3": TEXT}
    )
    assert current.relevant("q1") == {"d1": 2}
    assert current.graded("q1") == {"d1": 2, "d2": 0}
    assert current.relevant("q2") == {}


def test_merged_replaces_a_pair_and_keeps_the_rest() -> None:
    collection = Judgments([judgment(doc_id="d1", grade=0), judgment(doc_id="d2")])
    merged = collection.merged([judgment(doc_id="d1", grade=2, judge_model="n")])
    assert merged[("q1", "d1")].grade == 2 and merged[("q1", "d1")].judge_model == "n"
    assert merged[("q1", "d2")] == judgment(doc_id="d2")
    assert collection[("q1", "d1")].grade == 0  # unchanged: the collection is immutable


def test_judged_queries_read_ids_and_text_and_ignore_suggested_labels(tmp_path: Path) -> None:
    path = tmp_path / "queries.jsonl"
    imported = {
        "query_id": "log-1",
        "query": "lemon tart",
        "expected_top_k_ids": ["a"],
        "ground_truth_source": "synthetic",
    }
    path.write_text(json.dumps(imported) + "\n" + json.dumps({"query_id": "q2", "query": "x"}))
    assert [(q.query_id, q.query) for q in read_judged_queries(path)] == [
        ("log-1", "lemon tart"),
        ("q2", "x"),
    ]
    path.write_text(json.dumps({"query_id": "q2", "query": "x"}) + "\n" + '{"query_id": "q2"}\n')
    with pytest.raises(InputError) as raised:
        read_judged_queries(path)
    assert raised.value.line == 2 and raised.value.message == "query must be a non-empty string"
    path.write_text(
        json.dumps({"query_id": "q2", "query": "x"})
        + "\n"
        + json.dumps({"query_id": "q2", "query": "y"})
    )
    with pytest.raises(InputError, match=r"query_id 'q2' is used twice \(first on line 1\)"):
        read_judged_queries(path)
    with pytest.raises(InputError, match="does not exist"):
        read_judged_queries(tmp_path / "absent.jsonl")
