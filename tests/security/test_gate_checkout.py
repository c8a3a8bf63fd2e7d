"""A pull request's check never passes code that the run did not evaluate.

Threat: on `pull_request_target` the runner checks out the base branch, not the pull
request. Evaluating that and setting a success status on the pull request's head would
pass any change unseen. The run refuses with an `error` status, saying how to check out
the pull request's code, unless the workspace holds its head or its merge commit.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.action.git_repo import git
from tests.action.payloads import pull_request_event
from tests.action.project import REGRESSING_NOTES
from tests.security.harness import Repo
from tests.support.action import run_action

pytestmark = pytest.mark.slow


def _target_run(repo: Repo, number: int, base: str, head: str, checkout: str):  # type: ignore[no-untyped-def]
    files = git(repo.path, "diff", "--name-only", f"{base}...{head}").splitlines()
    repo.github.add_pull(number, head_sha=head, base_sha=base, files=files)
    payload = pull_request_event(
        number=number, head_sha=head, base_sha=base, changed_files=len(files)
    )
    git(repo.path, "checkout", "-q", checkout)
    return repo.action("pull_request_target", payload, sha=base)


def test_pull_request_target_on_the_base_checkout_is_an_error_not_a_pass(repo: Repo) -> None:
    main = repo.establish_baseline()
    repo.branch("feature", main)
    head = repo.commit(REGRESSING_NOTES, "break two notes")

    run = _target_run(repo, 60, main, head, checkout=main)

    assert run.returncode == 2, run.log
    assert run.outputs["verdict"] == "error"
    statuses = repo.github.statuses_for(head)
    assert [s["state"] for s in statuses] == ["error"]
    assert "neither this pull request's head" in run.log
    assert "ref: ${{ github.event.pull_request.head.sha }}" in run.log


def test_pull_request_target_on_the_head_checkout_is_evaluated(repo: Repo) -> None:
    main = repo.establish_baseline()
    repo.branch("feature", main)
    head = repo.commit(REGRESSING_NOTES, "break two notes")

    run = _target_run(repo, 61, main, head, checkout=head)

    assert run.returncode == 1, run.log
    assert run.outputs["verdict"] == "regression"
    assert [s["state"] for s in repo.github.statuses_for(head)] == ["failure"]


def test_a_worktree_checkout_without_git_is_recognised(repo: Repo, tmp_path: Path) -> None:
    """Where there is no git binary (the Action's image), a checkout whose `.git` is a
    file (`gitdir: …`, a worktree or a submodule) still tells which commit it holds."""
    main = repo.establish_baseline()
    repo.branch("feature", main)
    head = repo.commit(REGRESSING_NOTES, "break two notes")
    git(repo.path, "checkout", "-q", main)
    worktree = tmp_path / "checkout"
    git(repo.path, "worktree", "add", "-q", "-b", "pr-head", str(worktree), head)
    assert (worktree / ".git").is_file()
    for name in ("retrieval-eval.toml", "baseline.json"):  # what the API serves at the base
        repo.github.contents[(main, name)] = git(repo.path, "show", f"{main}:{name}").encode()
    files = git(repo.path, "diff", "--name-only", f"{main}...{head}").splitlines()
    repo.github.add_pull(62, head_sha=head, base_sha=main, files=files)
    no_git = tmp_path / "bin"
    no_git.mkdir()

    run = run_action(
        worktree,
        tmp_path / "run",
        event_name="pull_request_target",
        payload=pull_request_event(
            number=62, head_sha=head, base_sha=main, changed_files=len(files)
        ),
        api_url=repo.github.base_url,
        sha=main,
        extra_env={"PATH": str(no_git)},
        github_retry_seconds="5",
    )

    assert "neither this pull request's head" not in run.log, run.log
    assert run.outputs["verdict"] == "regression", run.log
    assert [s["state"] for s in repo.github.statuses_for(head)] == ["failure"]
