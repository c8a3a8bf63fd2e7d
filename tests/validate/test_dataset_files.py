"""Which files ``validate PATH...`` covers: a folder's semantic/keyword/hybrid.jsonl (other
JSONL files there listed as ignored), any file named outright, each once."""

from __future__ import annotations

from pathlib import Path

import pytest

from retrieval_eval.errors import InputError
from retrieval_eval.validate import validate_datasets
from retrieval_eval.validate.dataset_files import resolve_dataset_files
from tests.commands.test_validate import run
from tests.validate.dataset_builders import full_dataset


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda tmp: tmp / "missing.jsonl", "{tmp}/missing.jsonl: no such file or folder"),
        (
            lambda tmp: tmp,
            "{tmp}: no dataset files in this folder (expected semantic.jsonl, keyword.jsonl, "
            "hybrid.jsonl)",
        ),
    ],
)
def test_usage_errors_raise(tmp_path: Path, make: object, message: str) -> None:
    with pytest.raises(InputError) as caught:
        validate_datasets([make(tmp_path)], corpus=None)  # type: ignore[operator]
    assert str(caught.value) == message.format(tmp=tmp_path)


def test_a_folder_means_its_dataset_files_and_lists_the_other_jsonl_as_ignored(
    tmp_path: Path,
) -> None:
    keyword = full_dataset(tmp_path / "keyword.jsonl", "keyword")
    semantic = full_dataset(tmp_path / "semantic.jsonl", "semantic")
    (tmp_path / "corpus.jsonl").write_text("{}\n", encoding="utf-8")
    (tmp_path / "notes.md").write_text("# not JSONL\n", encoding="utf-8")
    found = resolve_dataset_files([tmp_path])
    assert found.files == (semantic, keyword)
    assert found.ignored == (tmp_path / "corpus.jsonl",)


def test_a_file_named_outright_is_covered_whatever_its_name_and_each_file_once(
    tmp_path: Path,
) -> None:
    regressions = full_dataset(tmp_path / "regressions.jsonl", "semantic")
    semantic = full_dataset(tmp_path / "semantic.jsonl", "semantic")
    found = resolve_dataset_files([regressions, tmp_path, tmp_path / "." / "semantic.jsonl"])
    assert found.files == (regressions, semantic)
    assert found.ignored == ()  # the folder leaves it, but its name covers it


def test_a_folder_given_twice_lists_each_ignored_file_once(tmp_path: Path) -> None:
    full_dataset(tmp_path / "hybrid.jsonl", "hybrid")
    (tmp_path / "corpus.jsonl").write_text("{}\n", encoding="utf-8")
    found = resolve_dataset_files([tmp_path, tmp_path / "."])
    assert found.files == (tmp_path / "hybrid.jsonl",)
    assert found.ignored == (tmp_path / "corpus.jsonl",)


def test_the_command_notes_only_what_it_did_not_validate(tmp_path: Path) -> None:
    full_dataset(tmp_path / "semantic.jsonl", "semantic")
    full_dataset(tmp_path / "regressions.jsonl", "keyword")
    (tmp_path / "corpus.jsonl").write_text("{}\n", encoding="utf-8")
    code, _, err = run(["validate", str(tmp_path), str(tmp_path / "regressions.jsonl")])
    assert code == 0, err
    notes = [line for line in err.splitlines() if line.startswith("note: ")]
    assert notes == [f"note: {tmp_path / 'corpus.jsonl'}: not a dataset file name, not validated"]
    assert "ok: 2 files, 40 fixtures" in err
