"""A regression accepted with the label, through `retrieval-eval action` on a real git
repository and the fake GitHub API: only a writer's label accepts, checked on every run."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.action.git_repo import git
from tests.action.payloads import pull_request_event
from tests.action.project import REGRESSING_NOTES
from tests.render.github_html import read
from tests.security.harness import Repo, Run
from tests.support.fake_github import FakeGitHub
from tests.support.runner_env import TOKEN

LABEL = "retrieval-eval: accept"


@pytest.fixture
def repo(tmp_path: Path) -> Iterator[Repo]:
    from tests.action.project import new_project

    with FakeGitHub(token=TOKEN, repository="octo/notes") as github:
        path = tmp_path / "workspace"
        new_project(path)
        yield Repo(path=path, runs=tmp_path / "runs", github=github)


def _regressing(repo: Repo) -> tuple[str, str]:
    main = repo.establish_baseline()
    repo.branch("feature", main)
    return main, repo.commit(REGRESSING_NOTES, "lose two answers")


def _labelled_run(
    repo: Repo,
    base: str,
    head: str,
    labels: tuple[str, ...] = (LABEL,),
    head_repo: str = "octo/notes",
    **inputs: str,
) -> Run:
    """The run the `labeled` event starts."""
    files = git(repo.path, "diff", "--name-only", f"{base}...{head}").splitlines()
    repo.github.add_pull(7, head_sha=head, base_sha=base, files=files, head_repo=head_repo)
    payload: dict[str, Any] = pull_request_event(
        number=7,
        head_sha=head,
        base_sha=base,
        head_repo=head_repo,
        action="labeled",
        changed_files=len(files),
        labels=labels,
    )
    git(repo.path, "checkout", "-q", head)
    run = repo.action("pull_request", payload, sha="e" * 40, **inputs)
    return Run(
        returncode=run.returncode,
        log=run.log,
        outputs=run.outputs,
        summary=run.summary,
        comments=[c["body"] for c in repo.github.comments_on(7)],
        statuses=repo.github.statuses_for(head),
    )


def test_a_writers_label_turns_the_regression_into_accepted(repo: Repo) -> None:
    base, head = _regressing(repo)
    repo.github.set_permission("maria", "write")
    repo.github.label_event(7, LABEL, actor="maria")

    run = _labelled_run(repo, base, head)

    assert run.returncode == 0, run.log
    assert run.outputs["verdict"] == "accepted"
    [status] = run.statuses
    assert status["state"] == "success"
    assert status["description"].startswith("accepted by maria: ")
    assert "Regression" in status["description"]  # what was accepted is still said
    page = read(run.comment)
    assert "accepted by @\u200bmaria" in page.text  # named, not notified
    assert "regressed" in page.text  # the report below is the regression's
    assert "accepted by maria" in run.summary
    # Asked of GitHub on this run: who added the label, and what they may do.
    assert repo.github.requests_to("GET", r"/issues/7/events$")
    assert repo.github.requests_to("GET", r"/collaborators/maria/permission$")


@pytest.mark.parametrize("permission", ["read", "none", "triage"])
def test_the_same_label_from_someone_who_cannot_write_changes_nothing(
    repo: Repo, permission: str
) -> None:
    """The pull request's author (alice) labels her own regression."""
    base, head = _regressing(repo)
    repo.github.set_permission("alice", permission)
    repo.github.label_event(7, LABEL, actor="alice")

    run = _labelled_run(repo, base, head)

    assert run.returncode == 1, run.log
    assert run.outputs["verdict"] == "regression"
    assert [s["state"] for s in run.statuses] == ["failure"]
    assert "accepted" not in run.statuses[0]["description"]
    assert "::warning title=regression not accepted::" in run.log
    assert "added by alice" in run.log


def test_a_label_removed_since_accepts_nothing(repo: Repo) -> None:
    base, head = _regressing(repo)
    repo.github.set_permission("maria", "admin")
    repo.github.label_event(7, LABEL, actor="maria")
    repo.github.label_event(7, LABEL, actor="maria", event="unlabeled")

    run = _labelled_run(repo, base, head)

    assert run.outputs["verdict"] == "regression", run.log
    assert run.returncode == 1


def test_another_label_by_a_writer_accepts_nothing(repo: Repo) -> None:
    base, head = _regressing(repo)
    repo.github.set_permission("maria", "write")
    repo.github.label_event(7, "looks fine", actor="maria")

    run = _labelled_run(repo, base, head, labels=("looks fine",))

    assert run.outputs["verdict"] == "regression", run.log
    assert not repo.github.requests_to("GET", r"/collaborators/")


def test_a_label_on_a_forks_pull_request_changes_nothing(repo: Repo) -> None:
    """The fork's `pull_request` run has a read-only token: it hands the regression over."""
    base, head = _regressing(repo)
    repo.github.set_permission("maria", "write")
    repo.github.label_event(7, LABEL, actor="maria")

    run = _labelled_run(repo, base, head, head_repo="mallory/notes")

    assert run.outputs["verdict"] == "regression", run.log
    assert run.returncode == 1
    assert not repo.github.requests_to("GET", r"/collaborators/")


def test_an_empty_accept_label_input_accepts_nothing(repo: Repo) -> None:
    base, head = _regressing(repo)
    repo.github.set_permission("maria", "write")
    repo.github.label_event(7, LABEL, actor="maria")

    run = _labelled_run(repo, base, head, accept_label="")

    assert run.outputs["verdict"] == "regression", run.log
