"""``retrieval-eval validate`` through the real entry point: output, annotations, exit codes."""

from __future__ import annotations

from pathlib import Path

import pytest

from retrieval_eval.cli import main
from tests.validate.dataset_builders import fixture, full_dataset, line, write_dataset


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exited:
        main(args)
    captured = capsys.readouterr()
    code = exited.value.code
    return (code if isinstance(code, int) else 0), captured.out, captured.err


def test_valid_folder_exits_0(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    full_dataset(tmp_path / "semantic.jsonl", "semantic")
    full_dataset(tmp_path / "keyword.jsonl", "keyword")

    assert run(["validate", str(tmp_path)], capsys) == (0, "", "ok: 2 files, 40 fixtures\n")


def test_problems_exit_1_and_become_annotations_on_github(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    path = full_dataset(tmp_path / "semantic.jsonl", "semantic")
    with path.open("a", encoding="utf-8") as handle:
        handle.write(line(fixture("sem-021", query="", colour="red, 100%")))
    before = (path.read_bytes(), path.stat().st_mtime_ns)

    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    code, out, err = run(["validate", str(path)], capsys)

    escaped = str(path).replace(":", "%3A").replace(",", "%2C")
    assert code == 1
    assert out.splitlines() == [
        f"{path}:21: field 'query': must not be empty or blank (got \"\")",
        f"::error file={escaped},line=21::field 'query': must not be empty or blank (got \"\")",
        f"{path}:21: unknown field 'colour'; allowed fields are answer_context, expect_empty, "
        "expected_keywords, expected_top_k_ids, filters, ground_truth_source, minimum_mrr, query, "
        "query_id, query_type, relevance, retrieval_type, tags",
        f"::error file={escaped},line=21::unknown field 'colour'; allowed fields are "
        "answer_context, "
        "expect_empty, expected_keywords, expected_top_k_ids, filters, ground_truth_source, "
        "minimum_mrr, query, query_id, query_type, relevance, retrieval_type, tags",
    ]
    assert err == "2 problems in 1 file\n"
    assert (path.read_bytes(), path.stat().st_mtime_ns) == before  # never modifies a file


def test_no_annotations_outside_github(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    path = write_dataset(tmp_path / "hybrid.jsonl", [line(fixture("h1", "hybrid"))])
    code, out, _ = run(["validate", str(path), "--min-fixtures", "2", "--min-human", "0"], capsys)
    assert (code, out) == (1, f"{path}:1: 1 valid fixtures; at least 2 are required\n")


def test_missing_path_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(["validate", str(tmp_path / "nope")], capsys)
    assert (code, out, err) == (2, "", f"error: {tmp_path / 'nope'}: no such file or folder\n")


def test_unreadable_dataset_file_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "semantic.jsonl").mkdir()  # exists, cannot be read as a file (root reads any file)
    code, _, err = run(["validate", str(tmp_path)], capsys)
    assert (code, err) == (
        2,
        f"error: {tmp_path / 'semantic.jsonl'}: cannot read file: Is a directory\n",
    )


def test_missing_corpus_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = full_dataset(tmp_path / "semantic.jsonl", "semantic")
    code, _, err = run(["validate", str(path), "--corpus", str(tmp_path / "notes")], capsys)
    assert (code, err) == (2, f"error: {tmp_path / 'notes'}: corpus path does not exist\n")


def test_corpus_ids_checked_and_empty_notes_warned(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "doc-a.md").write_text("# A\nbody #x\n", encoding="utf-8")
    (notes / "blank.md").write_text("\n", encoding="utf-8")
    path = write_dataset(
        tmp_path / "d" / "semantic.jsonl",
        [line(fixture("q1")), line(fixture("q2", expected_top_k_ids=["doc-b"]))],
    )
    code, out, err = run(
        ["validate", str(path), "--corpus", str(notes), "--min-fixtures", "0", "--min-human", "0"],
        capsys,
    )
    assert code == 1
    assert (
        out
        == f"{path}:2: expected id 'doc-b' is not in the corpus ({notes}); did you mean 'doc-a'?\n"
    )
    assert err == f"warning: {notes}: skipped 1 empty document: blank\n1 problem in 1 file\n"
