"""Putting the verdict on GitHub when GitHub fails: a 502 is retried, an API that is down
or a token it refuses leaves the results in the job summary and exits 2, and the token is
never shown. End to end: ``retrieval-eval action`` as a subprocess, the fake GitHub API."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.action.git_repo import git
from tests.action.payloads import pull_request_event
from tests.action.project import new_project
from tests.action.test_main_scenarios import Repo, branch
from tests.support.fake_github import FakeGitHub, Fault

# Each scenario starts the Action as a process once or more (about 3 s each).
pytestmark = pytest.mark.slow


@pytest.fixture
def repo(tmp_path: Path, github: FakeGitHub) -> Repo:
    """A project on a real git repository (the suite's conftest gives another ``repo``)."""
    path = tmp_path / "workspace"
    new_project(path)
    return Repo(path=path, runs=tmp_path / "runs", github=github, api_url=github.base_url)


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


def test_a_wrong_token_fails_publishing_without_showing_the_token(repo: Repo) -> None:
    sha = git(repo.path, "rev-parse", "HEAD")
    repo.github.token = "ghs_the-real-token-is-different"
    result = repo.push(sha)
    assert result.returncode == 2
    assert "GitHub answered 401: Bad credentials" in result.stdout
