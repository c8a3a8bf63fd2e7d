"""The commit recorded with a run, also where no git binary exists (the Action's image)."""

from __future__ import annotations

from pathlib import Path

import pytest

from retrieval_eval.compare.environment import git_commit
from tests.action.git_repo import commit_all, git, init_repo, write


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    path = tmp_path / "repo"
    init_repo(path)
    write(path, {"datasets/a.jsonl": "{}\n"})
    commit_all(path, "first")
    write(path, {"datasets/b.jsonl": "{}\n"})
    commit_all(path, "second")
    return path


@pytest.fixture
def no_git(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))


@pytest.mark.parametrize("layout", ["branch", "packed", "detached"])
def test_head_is_read_from_the_git_folder_without_git(
    repo: Path, layout: str, request: pytest.FixtureRequest
) -> None:
    if layout == "packed":
        git(repo, "pack-refs", "--all")
    if layout == "detached":
        git(repo, "checkout", "-q", "--detach", "HEAD^")
    expected = git(repo, "rev-parse", "HEAD")
    assert git_commit(repo / "datasets") == expected  # with git
    request.getfixturevalue("no_git")
    assert git_commit(repo / "datasets") == expected  # without it


def test_outside_a_repository_there_is_no_commit(tmp_path: Path, no_git: None) -> None:
    assert git_commit(tmp_path) is None
