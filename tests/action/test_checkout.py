"""A pull request's run evaluates the pull request's code or refuses: on
``pull_request_target`` the runner checks out the base branch, and a success status on
the head for code never evaluated would pass it. Real git workspaces throughout."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from retrieval_eval.action.checkout import (
    CHECKOUT_ADVICE,
    checked_out_code_problem,
    workspace_head,
)
from retrieval_eval.action.event import PullRequestActivity
from retrieval_eval.action.inputs import RunnerContext
from retrieval_eval.errors import RetrievalEvalError
from tests.action.git_repo import commit_all, git, init_repo, write


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    path = tmp_path / "workspace"
    init_repo(path)
    write(path, {"README.md": "base\n"})
    commit_all(path, "base")
    return path


def runner(workspace: Path, sha: str = "e" * 40) -> RunnerContext:
    return RunnerContext(
        event_name="pull_request_target",
        event_path=workspace / "event.json",
        repository="octo/notes",
        sha=sha,
        api_url="http://127.0.0.1:9",
        server_url="https://github.example",
        run_id="1",
        workspace=workspace,
    )


def pull(head: str, base: str, event: str, merge: str | None = None) -> PullRequestActivity:
    return PullRequestActivity(
        number=7,
        head_sha=head,
        base_sha=base,
        head_repository="octo/notes",
        base_repository="octo/notes",
        changed_files_count=1,
        event_name=event,
        merge_commit_sha=merge,
    )


def test_the_head_is_read_from_git_or_from_gits_files(workspace: Path, tmp_path: Path) -> None:
    head = git(workspace, "rev-parse", "HEAD")
    assert workspace_head(workspace) == head
    os.rename(workspace / ".git", tmp_path / "moved.git")
    assert workspace_head(workspace) is None  # not a checkout at all


def test_pull_request_target_on_the_base_branch_is_refused(workspace: Path) -> None:
    base = git(workspace, "rev-parse", "HEAD")
    head = "f" * 40
    with pytest.raises(RetrievalEvalError) as caught:
        checked_out_code_problem(
            runner(workspace, sha=base), pull(head, base, "pull_request_target")
        )
    assert str(caught.value) == (
        f"the workspace holds {base[:7]}, which is neither this pull request's head "
        f"{head[:7]} nor its merge commit, so its code would not be evaluated; " + CHECKOUT_ADVICE
    )


def test_the_head_or_the_merge_commit_checked_out_is_evaluated(workspace: Path) -> None:
    base = git(workspace, "rev-parse", "HEAD")
    write(workspace, {"README.md": "proposed\n"})
    head = commit_all(workspace, "proposed")
    checked_out_code_problem(runner(workspace), pull(head, base, "pull_request_target"))
    merge = commit_all(workspace, "the merge GitHub made")
    checked_out_code_problem(runner(workspace), pull(head, base, "pull_request_target", merge))


def test_on_pull_request_the_runners_own_merge_commit_counts(workspace: Path) -> None:
    merge = git(workspace, "rev-parse", "HEAD")
    checked_out_code_problem(runner(workspace, sha=merge), pull("a" * 40, "b" * 40, "pull_request"))
    with pytest.raises(RetrievalEvalError, match="neither this pull request's head"):
        checked_out_code_problem(
            runner(workspace, sha=merge), pull("a" * 40, "b" * 40, "pull_request_target")
        )


def test_no_checkout_to_read_passes_only_on_pull_request(tmp_path: Path) -> None:
    checked_out_code_problem(runner(tmp_path), pull("a" * 40, "b" * 40, "pull_request"))
    with pytest.raises(RetrievalEvalError, match=r"^the workspace holds an unknown commit"):
        checked_out_code_problem(runner(tmp_path), pull("a" * 40, "b" * 40, "pull_request_target"))
