"""`retrieval-eval generate`'s own part: the flags it refuses together, and `--out`, its
name for the `datasets` setting (the generation itself: tests/usecases/test_generate.py)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.author.cli import retrieval_eval


@pytest.fixture
def project(tmp_path: Path, repo_root: Path) -> Path:
    shutil.copytree(repo_root / "datasets" / "corpus", tmp_path / "notes")
    (tmp_path / "retrieval-eval.toml").write_text('corpus = "notes"\n')
    return tmp_path


def test_force_and_append_together_are_refused(project: Path) -> None:
    result = retrieval_eval("generate", "--force", "--append", cwd=project)
    assert result.returncode == 2
    assert "pick one" in result.stderr


def test_out_is_the_datasets_setting_and_overrides_the_file(project: Path) -> None:
    """The file names a folder that holds a keyword.jsonl; `--out` names another, empty one,
    so no file there is in the way (and without a key, the missing key is the error)."""
    (project / "retrieval-eval.toml").write_text('corpus = "notes"\ndatasets = "golden"\n')
    (project / "golden").mkdir()
    (project / "golden" / "keyword.jsonl").write_text("{}\n")
    from_file = retrieval_eval("generate", "--types", "keyword", cwd=project)
    assert from_file.returncode == 2
    assert "golden/keyword.jsonl: exists; pass --append" in from_file.stderr
    (project / "fresh").mkdir()
    flagged = retrieval_eval("generate", "--types", "keyword", "--out", "fresh", cwd=project)
    assert flagged.returncode == 2
    assert "ANTHROPIC_API_KEY is not set" in flagged.stderr
