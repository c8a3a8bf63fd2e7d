"""The last line `validate` prints: ok with the counts, or the problems counted in the
files that hold them; and each problem at its FILE:LINE."""

from __future__ import annotations

from pathlib import Path

from retrieval_eval.validate import validate_datasets
from tests.validate.dataset_builders import fixture, full_dataset, line, write_dataset


def test_every_file_valid_says_ok_with_the_counts(tmp_path: Path) -> None:
    full_dataset(tmp_path / "semantic.jsonl", "semantic")
    full_dataset(tmp_path / "keyword.jsonl", "keyword")
    report = validate_datasets([tmp_path], corpus=None)
    assert report.ok
    assert report.summary() == "ok: 2 files, 40 fixtures"


def test_problems_are_counted_in_the_files_that_hold_them(tmp_path: Path) -> None:
    full_dataset(tmp_path / "semantic.jsonl", "semantic")
    lines = [line(fixture(f"key-{i:03d}", "keyword")) for i in range(1, 21)]
    lines[4] = line(fixture("key-005", "keyword", minimum_mrr="0.7"))
    lines[9] = '{"query_id": \n'
    write_dataset(tmp_path / "keyword.jsonl", lines)

    report = validate_datasets([tmp_path], corpus=None, min_fixtures=1, min_human=1)

    assert not report.ok
    assert [(p.file.name, p.line) for p in report.problems] == [
        ("keyword.jsonl", 5),
        ("keyword.jsonl", 10),
    ]
    assert report.summary() == "2 problems in 1 file of the 2 files validated"


def test_one_problem_in_the_one_file(tmp_path: Path) -> None:
    path = write_dataset(
        tmp_path / "hybrid.jsonl",
        [line(fixture("h-1", "hybrid")), line(fixture("h-2", "hybrid", expected_top_k_ids=[]))],
    )
    report = validate_datasets([path], corpus=None, min_fixtures=1, min_human=1)
    assert report.summary() == "1 problem in 1 file"
    [problem] = report.problems
    assert str(problem) == (
        f"{path}:2: expected_top_k_ids is empty; list at least one id, or set expect_empty: "
        "true if no results is the correct answer"
    )
