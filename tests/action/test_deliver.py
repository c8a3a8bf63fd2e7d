"""Putting the verdict on GitHub when GitHub fails: a 502 is retried, an API that is down
or a token it refuses leaves the results in the job summary and exits 2, and the token is
never shown. End to end: ``retrieval-eval action`` as a subprocess, the fake GitHub API."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from pydantic import SecretStr

from retrieval_eval.action.deliver import deliver
from retrieval_eval.action.github_api import GitHubApi
from retrieval_eval.action.inputs import ActionSettings, load_action_settings
from retrieval_eval.action.runner_files import RunnerFiles
from retrieval_eval.vocabulary import ExitCode
from tests.action.git_repo import git
from tests.action.payloads import pull_request_event
from tests.action.project import new_project
from tests.action.test_main_scenarios import Repo, branch
from tests.support.fake_github import FakeGitHub, Fault
from tests.support.runner_env import TOKEN, read_outputs, runner_env

# Each scenario starts the Action as a process once or more (about 3 s each); the
# calls on their own (the real client against the fake API) are fast.
slow = pytest.mark.slow


@pytest.fixture
def repo(tmp_path: Path, github: FakeGitHub) -> Repo:
    """A project on a real git repository (the suite's conftest gives another ``repo``)."""
    path = tmp_path / "workspace"
    new_project(path)
    return Repo(path=path, runs=tmp_path / "runs", github=github, api_url=github.base_url)


@slow
def test_api_502s_are_retried_and_the_run_succeeds(repo: Repo) -> None:
    base = git(repo.path, "rev-parse", "HEAD")
    branch(repo, base, "feature")
    head = repo.commit({"README.md": "# x\n"}, "x")
    for path in ("/pulls/14/files", "/issues/14/comments", "/statuses/"):
        repo.github.inject(Fault(path=path, status=502, times=1))

    result = repo.pull_request(14, base, head)

    assert result.returncode == 0, result.log
    assert len(repo.github.comments_on(14)) == 1
    assert [s["state"] for s in repo.github.statuses_for(head)] == ["success"]
    assert len(repo.github.requests_to("POST", "/statuses/")) == 2


@slow
def test_api_down_still_leaves_the_results_in_the_summary_and_exits_2(repo: Repo) -> None:
    base = git(repo.path, "rev-parse", "HEAD")
    branch(repo, base, "feature")
    head = repo.commit({"README.md": "# x\n"}, "x")
    repo.github.add_pull(15, head_sha=head, base_sha=base, files=["README.md"])
    repo.github.stop()  # connection refused from here on

    git(repo.path, "checkout", "-q", head)
    result = repo.action(
        "pull_request",
        pull_request_event(number=15, head_sha=head, base_sha=base),
        sha="e" * 40,
        github_retry_seconds="0.5",  # one immediate retry per call, no real waiting
    )

    assert result.returncode == 2, result.log
    assert result.outputs["verdict"] == "baseline-established"
    assert result.summary.startswith("📌 **Baseline established: keyword.jsonl NDCG@10 1.000**")
    assert "::error::The results are in the job summary, but publishing failed:" in result.stdout
    assert "could not reach the GitHub API (connection failed)" in result.stdout


@slow
def test_a_wrong_token_fails_publishing_without_showing_the_token(repo: Repo) -> None:
    sha = git(repo.path, "rev-parse", "HEAD")
    repo.github.token = "ghs_the-real-token-is-different"
    result = repo.push(sha)
    assert result.returncode == 2
    assert "GitHub answered 401: Bad credentials" in result.stdout


HEAD = "a" * 40


def settings_for(github: FakeGitHub, workspace: Path) -> ActionSettings:
    return load_action_settings(runner_env(workspace, api_url=github.base_url))


def api_for(github: FakeGitHub) -> GitHubApi:
    return GitHubApi(
        token=SecretStr(TOKEN),
        api_url=github.base_url,
        repository="octo/notes",
        retry_budget_seconds=0,
        seconds_between_writes=0,
    )


def send(github: FakeGitHub, tmp_path: Path) -> tuple[ExitCode | None, str, dict[str, str]]:
    github.add_pull(7, head_sha=HEAD, base_sha="b" * 40)
    log = io.StringIO()
    outputs = tmp_path / "outputs"
    failure = deliver(
        api_for(github),
        settings_for(github, tmp_path / "workspace"),
        RunnerFiles(log, output_file=outputs),
        sha=HEAD,
        verdict="regression",
        description="regression: keyword.jsonl\nMRR@10 " + "-0.1 " * 60,
        group_title="Publishing",
        pr_number=7,
        comment_markdown="### Regression",
    )
    return failure, log.getvalue(), read_outputs(outputs)


def test_the_status_and_the_comment_land_and_the_comment_url_is_an_output(
    github: FakeGitHub, tmp_path: Path
) -> None:
    failure, log, outputs = send(github, tmp_path)
    assert failure is None, log
    [status] = github.statuses_for(HEAD)
    assert (status["state"], status["context"]) == ("failure", "retrieval-eval")
    assert status["target_url"] == "https://github.example/octo/notes/actions/runs/4242"
    assert "\n" not in status["description"] and len(status["description"]) <= 140
    [comment] = github.comments_on(7)
    assert "### Regression" in comment["body"]
    assert outputs["comment-url"] == comment["html_url"]


def test_a_refused_comment_does_not_cost_the_status_and_exits_2(
    github: FakeGitHub, tmp_path: Path
) -> None:
    github.inject(Fault(path="/issues/7/comments", method="POST", status=403))
    failure, log, outputs = send(github, tmp_path)
    assert failure == ExitCode.ERROR
    assert [s["state"] for s in github.statuses_for(HEAD)] == ["failure"]
    assert github.comments_on(7) == []
    assert "::error::The results are in the job summary, but publishing failed:" in log
    assert "comment-url" not in outputs
