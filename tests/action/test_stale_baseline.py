"""On a pull request, a baseline behind the default branch is said: in the comment's
notice, the passing headline and status, and a log warning; and nothing is said when main
holds the baseline. Each scenario runs ``retrieval-eval action`` as the runner does, on a
real git repository, against the fake GitHub API."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.action.git_repo import commit_all
from tests.action.project import new_project
from tests.action.test_commit_keeps_gains import RESTORED_NOTES, weak_baseline_on_main
from tests.action.test_main_scenarios import Repo, branch, establish_baseline_on_main
from tests.support.fake_github import FakeGitHub

pytestmark = pytest.mark.slow


@pytest.fixture
def repo(tmp_path: Path, github: FakeGitHub) -> Repo:
    """A project on a real git repository (the suite's conftest gives another ``repo``)."""
    path = tmp_path / "workspace"
    new_project(path)
    return Repo(path=path, runs=tmp_path / "runs", github=github, api_url=github.base_url)


def test_a_pull_request_is_told_when_main_measures_better_than_its_baseline(repo: Repo) -> None:
    weak_baseline_on_main(repo)
    better = repo.commit(RESTORED_NOTES, "restore the two notes")
    # With the ratchet off, the baseline stays at 0.667; the history records 1.000.
    pushed = repo.push(better, baseline_update="fixed")
    assert pushed.outputs["verdict"] == "passed", pushed.log
    # The workflow's next step commits the history: that commit is the pull request's base.
    main = commit_all(repo.path, "retrieval-eval: baseline and history")
    branch(repo, main, "feature")
    head = repo.commit({"datasets/corpus/travel/porto.md": "# Porto\n\nWine.\n"}, "porto")

    result = repo.pull_request(5, main, head)

    assert result.outputs["verdict"] == "passed", result.log
    [comment] = repo.github.comments_on(5)
    notice = (
        "baseline.json is behind the default branch.** The history records the last evaluated "
        f"commit of the default branch ({better[:7]}) measuring keyword.jsonl MRR@10 1.000 "
        "(baseline 0.667, 50.0% better)"
    )
    assert notice in comment["body"]
    assert "more than the 5.0% tolerance" in comment["body"]
    # The pass itself says what it compared against is behind, in its headline and status.
    assert (
        "; baseline.json is behind the default branch (keyword.jsonl MRR@10 1.000 there, "
        "0.667 in the baseline)" in comment["body"]
    )
    assert "behind the default branch" in repo.github.statuses_for(head)[-1]["description"]
    assert (
        "::warning title=stale baseline::baseline.json is behind the default branch" in result.log
    )


def test_no_stale_warning_when_main_holds_the_baseline(repo: Repo) -> None:
    main = establish_baseline_on_main(repo)
    pushed = repo.push(main)
    assert pushed.outputs["verdict"] == "passed", pushed.log
    main = commit_all(repo.path, "retrieval-eval: history")
    branch(repo, main, "feature")
    head = repo.commit({"datasets/corpus/travel/porto.md": "# Porto\n\nWine.\n"}, "porto")
    result = repo.pull_request(6, main, head)
    [comment] = repo.github.comments_on(6)
    assert "behind the default branch" not in comment["body"], result.log
