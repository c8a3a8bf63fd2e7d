"""A baseline that keeps gains: the ratchet on the default branch, and skipped runs.

Each scenario runs ``retrieval-eval action`` as the runner does, on a real git repository,
against the fake GitHub API: a push to main, then what the next push or pull request sees.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.action.git_repo import commit_all, git
from tests.action.project import CONFIG, NOTES, REGRESSING_NOTES, new_project
from tests.action.test_main_scenarios import MARKER, Repo, branch, establish_baseline_on_main
from tests.support.fake_github import FakeGitHub

pytestmark = pytest.mark.slow

# The notes REGRESSING_NOTES rewrites, as they are: restoring them is an improvement.
RESTORED_NOTES = {
    name: NOTES[name.removeprefix("datasets/corpus/").removesuffix(".md")]
    for name in REGRESSING_NOTES
}


@pytest.fixture
def repo(tmp_path: Path, github: FakeGitHub) -> Repo:
    new_project(tmp_path / "workspace")
    return Repo(
        path=tmp_path / "workspace", runs=tmp_path / "runs", github=github, api_url=github.base_url
    )


def baseline(repo: Repo) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((repo.path / "baseline.json").read_text(encoding="utf-8"))
    return data["datasets"]["keyword.jsonl"]


def weak_baseline_on_main(repo: Repo, **inputs: str) -> str:
    """Main starts with two notes that miss their queries (MRR@10 0.667), baseline committed."""
    weak = repo.commit(REGRESSING_NOTES, "two vague notes")
    pushed = repo.push(weak, **inputs)
    assert pushed.outputs["verdict"] == "baseline-established", pushed.log
    return commit_all(repo.path, "retrieval-eval: establish baseline")


def test_the_ratchet_raises_the_baseline_on_a_passing_push_and_never_lowers_it(
    repo: Repo,
) -> None:
    weak_baseline_on_main(repo)
    weak = baseline(repo)
    assert weak["aggregates"]["mrr@10"] == pytest.approx(2 / 3)

    better = repo.commit(RESTORED_NOTES, "restore the two notes")
    raised = repo.push(better, baseline_update="ratchet")

    assert raised.returncode == 0, raised.log
    assert raised.outputs["verdict"] == "passed"
    entry = baseline(repo)
    assert entry["aggregates"]["mrr@10"] == 1.0
    # Per query too: the gate compares query by query, and the ranks follow MRR.
    assert entry["queries"]["k-005"]["metrics"]["mrr@10"] == 1.0
    assert entry["queries"]["k-005"]["first_relevant_rank"] == 1
    # Latency is not gated here: it decides nothing, so it is not rewritten on every run.
    assert entry["aggregates"]["latency_p95_ms"] == weak["aggregates"]["latency_p95_ms"]
    # It says what moved, in the log and in the job summary.
    assert (
        "::notice::Raised baseline.json to this run's values: keyword.jsonl MRR@10 0.667 → 1.000"
        in raised.log
    )
    assert "| keyword.jsonl | MRR@10 | 0.667 | 1.000 |" in raised.summary
    assert git(repo.path, "status", "--porcelain", "baseline.json") == "M baseline.json"
    commit_all(repo.path, "retrieval-eval: baseline and history")
    raised_text = (repo.path / "baseline.json").read_text(encoding="utf-8")

    # A later push that falls back, but within a loose tolerance, passes and lowers nothing.
    worse = repo.commit(REGRESSING_NOTES, "the vague notes again")
    held = repo.push(worse, baseline_update="ratchet", tolerance="0.5")
    assert held.returncode == 0, held.log
    assert held.outputs["verdict"] == "passed"
    assert (repo.path / "baseline.json").read_text(encoding="utf-8") == raised_text
    assert "no metric beat baseline.json; it is unchanged" in held.log

    # With the default tolerance the same fallback is a regression, gated against 1.000.
    failed = repo.push(worse, baseline_update="ratchet")
    assert failed.returncode == 1, failed.log
    assert failed.outputs["verdict"] == "regression"
    assert "MRR@10 1.000 → 0.667" in repo.github.statuses_for(worse)[-1]["description"]
    assert baseline(repo)["aggregates"]["mrr@10"] == 1.0


def test_the_ratchet_is_the_default_only_on_a_push_to_the_default_branch(repo: Repo) -> None:
    weak_baseline_on_main(repo)
    before = (repo.path / "baseline.json").read_text(encoding="utf-8")
    better = repo.commit(RESTORED_NOTES, "restore the two notes")

    fixed = repo.push(better, baseline_update="fixed")  # opted out: the baseline stays
    assert fixed.outputs["verdict"] == "passed", fixed.log
    assert (repo.path / "baseline.json").read_text(encoding="utf-8") == before

    on_branch = repo.push(better, branch="feature", baseline_update="ratchet")
    assert on_branch.outputs["verdict"] == "passed", on_branch.log
    assert (repo.path / "baseline.json").read_text(encoding="utf-8") == before
    assert "not a push to the default branch" in on_branch.log


def test_the_config_file_can_turn_the_ratchet_on(repo: Repo) -> None:
    weak_baseline_on_main(repo)
    better = repo.commit(
        {**RESTORED_NOTES, "retrieval-eval.toml": 'baseline_update = "ratchet"\n' + CONFIG},
        "restore the two notes; ratchet the baseline",
    )
    raised = repo.push(better)
    assert raised.outputs["verdict"] == "passed", raised.log
    assert baseline(repo)["aggregates"]["mrr@10"] == 1.0


def test_a_bad_baseline_update_input_names_what_it_accepts(repo: Repo) -> None:
    result = repo.push(git(repo.path, "rev-parse", "HEAD"), baseline_update="raise")
    assert result.returncode == 2
    assert "input `baseline-update`: accepts fixed | ratchet, got 'raise'" in result.log


# --- a skipped run after an evaluated one ----------------------------------------------------


def test_a_skip_after_a_regression_marks_the_red_comment_as_about_an_earlier_commit(
    repo: Repo,
) -> None:
    main = establish_baseline_on_main(repo)
    branch(repo, main, "feature")
    broken = repo.commit({**REGRESSING_NOTES, "README.md": "# notes\n\nv1\n"}, "vaguer notes")
    red = repo.pull_request(9, main, broken, paths="datasets/**")
    assert red.outputs["verdict"] == "regression", red.log
    [comment] = repo.github.comments_on(9)
    report = comment["body"]
    assert "❌" in report

    # The author reverts the notes: the pull request now changes no watched file.
    reverted = repo.commit(RESTORED_NOTES, "put the notes back")
    skipped = repo.pull_request(9, main, reverted, action="synchronize", paths="datasets/**")

    assert skipped.returncode == 0, skipped.log
    assert skipped.outputs["verdict"] == "skipped"
    assert [s["state"] for s in repo.github.statuses_for(reverted)] == ["success"]
    [comment] = repo.github.comments_on(9)
    banner = (
        f"⏭️ **Skipped at `{reverted[:7]}`**: no changes under datasets/\\*\\*; "
        f"the last evaluation below is for `{broken[:7]}`."
    )
    assert comment["body"].startswith(MARKER + "\n")
    assert banner in comment["body"]
    # The earlier report is kept below the line, whole.
    assert report.removeprefix(MARKER + "\n") in comment["body"]
    assert skipped.outputs["comment-url"] == comment["html_url"]

    # A second skip replaces the line instead of stacking another.
    again = repo.commit({"README.md": "# notes\n\nv2\n"}, "reword the readme")
    repo.pull_request(9, main, again, action="synchronize", paths="datasets/**")
    [comment] = repo.github.comments_on(9)
    assert comment["body"].count("Skipped at") == 1
    assert f"Skipped at `{again[:7]}`" in comment["body"]
    assert f"the last evaluation below is for `{broken[:7]}`" in comment["body"]

    # The next evaluation writes a fresh comment: no skip line left.
    evaluated = repo.commit({"datasets/corpus/travel/porto.md": "# Porto\n\nWine.\n"}, "porto")
    passed = repo.pull_request(9, main, evaluated, action="synchronize", paths="datasets/**")
    assert passed.outputs["verdict"] == "passed", passed.log
    [comment] = repo.github.comments_on(9)
    assert "Skipped at" not in comment["body"]


def test_a_skip_with_no_earlier_comment_posts_none(repo: Repo) -> None:
    main = establish_baseline_on_main(repo)
    branch(repo, main, "docs")
    head = repo.commit({"README.md": "# notes\n\nmore\n"}, "docs only")
    result = repo.pull_request(10, main, head, paths="datasets/**")
    assert result.outputs["verdict"] == "skipped", result.log
    assert repo.github.comments_on(10) == []


def test_with_comment_new_a_skip_marks_the_latest_comment(repo: Repo) -> None:
    main = establish_baseline_on_main(repo)
    branch(repo, main, "feature")
    first = repo.commit({"datasets/corpus/travel/porto.md": "# Porto\n\nWine.\n"}, "porto")
    repo.pull_request(8, main, first, paths="datasets/**", comment="new")
    second = repo.commit(REGRESSING_NOTES, "vaguer notes")
    red = repo.pull_request(
        8, main, second, action="synchronize", paths="datasets/**", comment="new"
    )
    assert red.outputs["verdict"] == "regression", red.log
    # Both changes undone: the pull request no longer touches a watched file.
    repo.commit(RESTORED_NOTES, "put the notes back")
    git(repo.path, "rm", "-q", "datasets/corpus/travel/porto.md")
    reverted = commit_all(repo.path, "drop porto again")
    skipped = repo.pull_request(
        8, main, reverted, action="synchronize", paths="datasets/**", comment="new"
    )
    assert skipped.outputs["verdict"] == "skipped", skipped.log
    older, latest = (c["body"] for c in repo.github.comments_on(8))
    assert "Skipped at" not in older
    assert f"the last evaluation below is for `{second[:7]}`" in latest
