"""``mode: publish``: a fork's pull request leaves its results behind, and a trusted
``workflow_run`` job posts them, refusing results for another commit. End to end:
``retrieval-eval action`` as a subprocess, a real git workspace, the fake GitHub API."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.action.payloads import workflow_run_event
from tests.action.project import REGRESSING_NOTES, new_project
from tests.action.test_main_scenarios import MARKER, Repo, branch, establish_baseline_on_main
from tests.support.action import run_action
from tests.support.fake_github import FakeGitHub

# Each scenario starts the Action as a process once or more (about 3 s each).
pytestmark = pytest.mark.slow


@pytest.fixture
def repo(tmp_path: Path, github: FakeGitHub) -> Repo:
    """A project on a real git repository (the suite's conftest gives another ``repo``)."""
    path = tmp_path / "workspace"
    new_project(path)
    return Repo(path=path, runs=tmp_path / "runs", github=github, api_url=github.base_url)


def test_a_fork_pull_request_leaves_its_results_for_publish_mode(repo: Repo) -> None:
    main = establish_baseline_on_main(repo)
    branch(repo, main, "fork")
    head = repo.commit(REGRESSING_NOTES, "a fork's change")
    before = len(repo.github.requests)

    evaluated = repo.pull_request(13, main, head, fork=True)

    assert evaluated.returncode == 1, evaluated.log
    assert (
        "::warning title=fork pull request::This pull request comes from a fork" in evaluated.stdout
    )
    writes = [r for r in repo.github.requests[before:] if r.method in {"POST", "PATCH"}]
    assert writes == []  # a fork's token could not have written anything
    report_dir = repo.path / "retrieval-eval-report"
    metadata = json.loads((report_dir / "fork-publish.json").read_text())
    assert metadata["pr_number"] == 13 and metadata["head_sha"] == head
    assert metadata["verdict"] == "regression"

    # The workflow_run job downloads the artifact into its own, otherwise empty workspace.
    publisher = repo.runs / "publisher"
    shutil.copytree(report_dir, publisher / "retrieval-eval-report")
    published = run_action(
        publisher,
        repo.runs / "publish-run",
        event_name="workflow_run",
        payload=workflow_run_event(head_sha=head),
        api_url=repo.github.base_url,
        sha=main,
        mode="publish",
    )

    assert published.returncode == 0, published.log
    [comment] = repo.github.comments_on(13)
    assert comment["body"].startswith(MARKER + "\n")
    assert (
        repo.github.statuses_for(head)[0]["state"],
        repo.github.statuses_for(head)[0]["context"],
    ) == (
        "failure",
        "retrieval-eval",
    )
    assert published.outputs["comment-url"] == comment["html_url"]


def test_publish_mode_without_files_exits_0(tmp_path: Path, github: FakeGitHub) -> None:
    workspace = tmp_path / "empty"
    workspace.mkdir()
    result = run_action(
        workspace,
        tmp_path / "run",
        event_name="workflow_run",
        payload=workflow_run_event(head_sha="a" * 40),
        api_url=github.base_url,
        sha="b" * 40,
        mode="publish",
    )
    assert result.returncode == 0, result.log
    assert result.outputs["verdict"] == "skipped"
    assert "Nothing to publish" in result.summary
    assert github.requests == []


def test_publish_mode_refuses_results_for_another_commit(
    tmp_path: Path, github: FakeGitHub
) -> None:
    workspace = tmp_path / "ws"
    (workspace / "retrieval-eval-report").mkdir(parents=True)
    (workspace / "retrieval-eval-report" / "fork-publish.json").write_text(
        json.dumps(
            {
                "schema_version": 1,
                "pr_number": 3,
                "head_sha": "c" * 40,
                "verdict": "passed",
                "status_description": "passed",
                "comment_id": "retrieval-eval",
                "has_comment": False,
            }
        )
    )
    result = run_action(
        workspace,
        tmp_path / "run",
        event_name="workflow_run",
        payload=workflow_run_event(head_sha="a" * 40),
        api_url=github.base_url,
        sha="b" * 40,
        mode="publish",
    )
    assert result.returncode == 2
    assert (
        "::error::Refusing to publish: the results are for ccccccc, but the triggering run "
        "evaluated aaaaaaa" in result.stdout
    )
    assert github.requests == []
