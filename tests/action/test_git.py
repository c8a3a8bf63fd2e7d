"""Read-only git queries on the workspace: the output, or None when git cannot answer."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from retrieval_eval.action.git import run_git
from tests.action.git_repo import commit_all, init_repo, write


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    path = tmp_path / "workspace"
    init_repo(path)
    write(path, {"datasets/golden.jsonl": '{"id": "q1"}\n'})
    commit_all(path, "golden set")
    return path


def test_a_file_at_a_commit_is_read_from_the_history(repo: Path) -> None:
    assert run_git(repo, "show", "HEAD:datasets/golden.jsonl") == b'{"id": "q1"}\n'


def test_what_the_history_lacks_is_none(repo: Path) -> None:
    assert run_git(repo, "show", "HEAD:datasets/missing.jsonl") is None
    assert run_git(repo, "cat-file", "-e", "0" * 40) is None


def test_a_workspace_someone_else_owns_is_read_all_the_same(repo: Path) -> None:
    """The container runs as root on a workspace the runner's user owns."""
    if os.geteuid() != 0:
        pytest.skip("only root can give the workspace away")
    for folder, dirs, files in os.walk(repo):
        for name in (folder, *(os.path.join(folder, n) for n in (*dirs, *files))):
            os.lchown(name, 1234, 1234)
    assert run_git(repo, "rev-parse", "--verify", "HEAD") is not None


def test_a_folder_outside_any_repository_is_none(tmp_path: Path) -> None:
    assert run_git(tmp_path, "rev-parse", "HEAD") is None
