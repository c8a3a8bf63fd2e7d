"""A regression accepted with the label, through `retrieval-eval action` on a real git
repository and the fake GitHub API: only a writer's label accepts, checked on every run;
it accepts the head it was added on, never a later push; after the merge, the baseline
workflow records it and (with the ratchet) takes the accepted values as the baseline."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.action.git_repo import commit_all, git
from tests.action.payloads import pull_request_event
from tests.action.project import REGRESSING_NOTES
from tests.render.github_html import read
from tests.security.harness import Repo, Run
from tests.support.fake_github import FakeGitHub, Fault
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
    action: str = "labeled",
    **inputs: str,
) -> Run:
    """The run the `labeled` event starts (the last of ``labels`` is the one it added), or
    another event's run on the pull request (``action``)."""
    files = git(repo.path, "diff", "--name-only", f"{base}...{head}").splitlines()
    repo.github.add_pull(7, head_sha=head, base_sha=base, files=files, head_repo=head_repo)
    payload: dict[str, Any] = pull_request_event(
        number=7,
        head_sha=head,
        base_sha=base,
        head_repo=head_repo,
        action=action,
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


@pytest.mark.parametrize(
    "permission",
    [
        "read",
        pytest.param("none", marks=pytest.mark.slow),
        pytest.param("triage", marks=pytest.mark.slow),
    ],
)
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


@pytest.mark.slow
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


@pytest.mark.slow
def test_a_label_on_a_forks_pull_request_changes_nothing(repo: Repo) -> None:
    """The fork's `pull_request` run has a read-only token: it hands the regression over."""
    base, head = _regressing(repo)
    repo.github.set_permission("maria", "write")
    repo.github.label_event(7, LABEL, actor="maria")

    run = _labelled_run(repo, base, head, head_repo="mallory/notes")

    assert run.outputs["verdict"] == "regression", run.log
    assert run.returncode == 1
    assert not repo.github.requests_to("GET", r"/collaborators/")


@pytest.mark.slow
def test_an_empty_accept_label_input_accepts_nothing(repo: Repo) -> None:
    base, head = _regressing(repo)
    repo.github.set_permission("maria", "write")
    repo.github.label_event(7, LABEL, actor="maria")

    run = _labelled_run(repo, base, head, accept_label="")

    assert run.outputs["verdict"] == "regression", run.log


# Another note loses its answer: the push that comes after the label.
FURTHER_REGRESSION = {
    "datasets/corpus/travel/kyoto.md": "# Kyoto\n\nA city in Japan.\n",
}


def _push_after_the_label(repo: Repo, head: str) -> str:
    repo.branch("feature", head)
    return repo.commit(FURTHER_REGRESSION, "lose another answer")


@pytest.mark.slow
def test_a_push_after_the_label_is_not_accepted_until_the_label_is_added_again(
    repo: Repo,
) -> None:
    base, head = _regressing(repo)
    repo.github.set_permission("maria", "write")
    repo.github.label_event(7, LABEL, actor="maria")
    assert _labelled_run(repo, base, head).outputs["verdict"] == "accepted"

    newer = _push_after_the_label(repo, head)
    pushed = _labelled_run(repo, base, newer, action="synchronize")

    assert pushed.returncode == 1, pushed.log
    assert pushed.outputs["verdict"] == "regression"
    assert [s["state"] for s in pushed.statuses] == ["failure"]
    assert "::warning title=regression not accepted::" in pushed.log
    assert "a push came after it" in pushed.log
    assert f"add it again to accept {newer[:7]}" in pushed.log
    # Re-running the job changes nothing: the label is older than every status on this head.
    assert _labelled_run(repo, base, newer, action="synchronize").returncode == 1

    # Added again, it accepts this head: on its own `labeled` run, and on any run after it.
    repo.github.label_event(7, LABEL, actor="maria", event="unlabeled")
    repo.github.label_event(7, LABEL, actor="maria")
    assert _labelled_run(repo, base, newer).outputs["verdict"] == "accepted"
    rerun = _labelled_run(repo, base, newer, action="synchronize")
    assert rerun.outputs["verdict"] == "accepted", rerun.log
    assert repo.github.requests_to("GET", rf"/statuses/{newer}$")


@pytest.mark.slow
@pytest.mark.parametrize("opened_first", [True, False], ids=["labelled-later", "opened-with-it"])
def test_another_label_after_an_accepted_run_keeps_it_accepted(
    repo: Repo, opened_first: bool
) -> None:
    """Maria accepts after the first run failed, or opens the pull request with the label
    (no status on the head is older than it: the accepted run's status says it was there)."""
    base, head = _regressing(repo)
    repo.github.set_permission("maria", "write")
    if opened_first:
        opened = _labelled_run(repo, base, head, labels=(), action="opened")
        assert opened.outputs["verdict"] == "regression", opened.log
    repo.github.label_event(7, LABEL, actor="maria")
    assert _labelled_run(repo, base, head).outputs["verdict"] == "accepted"

    repo.github.label_event(7, "docs", actor="alice")
    run = _labelled_run(repo, base, head, labels=(LABEL, "docs"))

    assert run.returncode == 0, run.log
    assert run.outputs["verdict"] == "accepted"
    assert run.statuses[-1]["description"].startswith("accepted by maria: ")


@pytest.mark.slow
def test_a_success_status_that_does_not_say_accepted_does_not_accept(repo: Repo) -> None:
    """The label came before every status on the head, and no run accepted it there."""
    base, head = _regressing(repo)
    repo.github.set_permission("maria", "write")
    repo.github.label_event(7, LABEL, actor="maria")
    passed = _labelled_run(repo, base, head, labels=(), action="opened", tolerance="0.9")
    assert passed.outputs["verdict"] == "passed", passed.log

    run = _labelled_run(repo, base, head, action="synchronize")

    assert run.outputs["verdict"] == "regression", run.log
    assert "a push came after it" in run.log


# --- after the merge: the baseline workflow's push run ------------------------------------


def _baseline_entry(repo: Repo) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((repo.path / "baseline.json").read_text(encoding="utf-8"))
    return data["datasets"]["keyword.jsonl"]


def _history(repo: Repo) -> list[dict[str, Any]]:
    text = (repo.path / "retrieval-eval-history.jsonl").read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines()]


def _merge(repo: Repo, head: str) -> str:
    """Merge pull request #7 into main, as GitHub's merge button does."""
    repo.branch("main", git(repo.path, "rev-parse", "main"))
    git(repo.path, "merge", "-q", "--no-ff", head, "-m", "Merge pull request #7")
    merged = repo.head()
    repo.github.merge_pull(7, merge_commit_sha=merged)
    return merged


def _accepted_and_merged(repo: Repo) -> tuple[str, str]:
    """#7 regresses, maria (a writer) accepts it on its head, and it is merged."""
    base, head = _regressing(repo)
    repo.github.set_permission("maria", "write")
    assert _labelled_run(repo, base, head, labels=(), action="opened").returncode == 1
    repo.github.label_event(7, LABEL, actor="maria")
    assert _labelled_run(repo, base, head).outputs["verdict"] == "accepted"
    return head, _merge(repo, head)


@pytest.mark.slow
def test_a_merged_accepted_regression_becomes_the_baseline_through_the_ratchet(
    repo: Repo,
) -> None:
    _, merged = _accepted_and_merged(repo)
    before = _baseline_entry(repo)["aggregates"]["mrr@10"]

    pushed = repo.push(merged, baseline_update="ratchet")

    assert pushed.returncode == 0, pushed.log
    assert pushed.outputs["verdict"] == "accepted"
    [status] = repo.github.statuses_for(merged)
    assert status["state"] == "success"
    assert status["description"].startswith("accepted by maria on #7: ")
    # Asked of GitHub on this run: which pull request, who labelled it, on which head.
    assert repo.github.requests_to("GET", rf"/commits/{merged}/pulls$")
    assert repo.github.requests_to("GET", r"/collaborators/maria/permission$")
    lowered = _baseline_entry(repo)["aggregates"]["mrr@10"]
    assert lowered < before
    assert lowered == pytest.approx(2 / 3)
    assert "Set baseline.json to this run's values: maria accepted" in pushed.log
    last = _history(repo)[-1]
    assert last["commit"] == merged
    assert (last["accepted_by"], last["pull_request"], last["label"]) == ("maria", 7, LABEL)
    assert "accepted by maria on #7" in pushed.summary
    badge = json.loads((repo.path / "retrieval-eval-badge.json").read_text(encoding="utf-8"))
    assert badge["message"].endswith("accepted")
    commit_all(repo.path, "retrieval-eval: baseline and history")

    # The next pull request is gated against the accepted values, and passes.
    main = repo.head()
    repo.branch("typo", main)
    head = repo.commit({"datasets/corpus/books/deep-work.md": NOTE_FIXED}, "fix a typo")
    nxt = repo.pull_request(8, main, head)
    assert nxt.returncode == 0, nxt.log
    assert nxt.outputs["verdict"] == "passed"


NOTE_FIXED = "# Deep Work\n\nCal Newport on focus without distractions.\n"


@pytest.mark.slow
def test_with_a_fixed_baseline_the_merge_is_accepted_and_the_log_says_how_to_move_it(
    repo: Repo,
) -> None:
    _, merged = _accepted_and_merged(repo)
    before = (repo.path / "baseline.json").read_text(encoding="utf-8")

    pushed = repo.push(merged, baseline_update="fixed")

    assert pushed.returncode == 0, pushed.log
    assert pushed.outputs["verdict"] == "accepted"
    assert (repo.path / "baseline.json").read_text(encoding="utf-8") == before
    assert "run `retrieval-eval baseline update`" in pushed.log
    assert _history(repo)[-1]["accepted_by"] == "maria"


@pytest.mark.slow
def test_a_pull_request_opened_with_the_label_moves_the_baseline_after_the_merge(
    repo: Repo,
) -> None:
    """No status on its head is older than the label; its `labeled` run's status says it
    accepted the label there."""
    base, head = _regressing(repo)
    repo.github.set_permission("maria", "admin")
    repo.github.label_event(7, LABEL, actor="maria")
    assert _labelled_run(repo, base, head).outputs["verdict"] == "accepted"
    merged = _merge(repo, head)

    pushed = repo.push(merged, baseline_update="ratchet")

    assert pushed.outputs["verdict"] == "accepted", pushed.log
    assert _baseline_entry(repo)["aggregates"]["mrr@10"] == pytest.approx(2 / 3)


def _label_by_a_reader(repo: Repo) -> str:
    base, head = _regressing(repo)
    repo.github.set_permission("alice", "read")
    assert _labelled_run(repo, base, head, labels=(), action="opened").returncode == 1
    repo.github.label_event(7, LABEL, actor="alice")
    assert _labelled_run(repo, base, head).returncode == 1
    return _merge(repo, head)


def _label_removed_before_the_merge(repo: Repo) -> str:
    head, _ = _accepted_before_merge(repo)
    repo.github.label_event(7, LABEL, actor="maria", event="unlabeled")
    return _merge(repo, head)


def _label_before_the_last_push(repo: Repo) -> str:
    head, base = _accepted_before_merge(repo)
    newer = _push_after_the_label(repo, head)
    assert _labelled_run(repo, base, newer, action="synchronize").returncode == 1
    return _merge(repo, newer)


def _accepted_before_merge(repo: Repo) -> tuple[str, str]:
    base, head = _regressing(repo)
    repo.github.set_permission("maria", "write")
    assert _labelled_run(repo, base, head, labels=(), action="opened").returncode == 1
    repo.github.label_event(7, LABEL, actor="maria")
    assert _labelled_run(repo, base, head).outputs["verdict"] == "accepted"
    return head, base


@pytest.mark.slow
@pytest.mark.parametrize(
    ("merge", "reason"),
    [
        (_label_by_a_reader, "added by alice, whose permission on the repository is 'read'"),
        (_label_removed_before_the_merge, None),
        (_label_before_the_last_push, "a push came after it"),
    ],
    ids=["by-a-reader", "removed-before-the-merge", "before-the-last-push"],
)
def test_a_merge_without_a_valid_acceptance_does_not_move_the_baseline(
    repo: Repo, merge: Any, reason: str | None
) -> None:
    merged = merge(repo)
    before = (repo.path / "baseline.json").read_text(encoding="utf-8")

    pushed = repo.push(merged, baseline_update="ratchet")

    assert pushed.returncode == 1, pushed.log
    assert pushed.outputs["verdict"] == "regression"
    assert (repo.path / "baseline.json").read_text(encoding="utf-8") == before
    assert "accepted_by" not in _history(repo)[-1]
    if reason is not None:
        assert "::warning title=regression not accepted::#7: " in pushed.log
        assert reason in pushed.log


@pytest.mark.slow
def test_a_baseline_workflow_that_cannot_read_pull_requests_keeps_the_regression(
    repo: Repo,
) -> None:
    """A workflow written before `pull-requests: read`: GitHub answers 403 to the listing."""
    _, merged = _accepted_and_merged(repo)
    before = (repo.path / "baseline.json").read_text(encoding="utf-8")
    repo.github.inject(
        Fault(path=r"/commits/[0-9a-f]{40}/pulls$", status=403, body={"message": "forbidden"})
    )

    pushed = repo.push(merged, baseline_update="ratchet")

    assert pushed.returncode == 1, pushed.log
    assert pushed.outputs["verdict"] == "regression"
    assert (repo.path / "baseline.json").read_text(encoding="utf-8") == before
    assert "::warning title=regression not accepted::which pull request brought" in pushed.log
    assert "GitHub answered 403" in pushed.log
