"""A pull request's check never passes code that the run did not evaluate.

Threat: on `pull_request_target` the runner checks out the base branch, not the pull
request. Evaluating that and setting a success status on the pull request's head would
pass any change unseen. The run refuses with an `error` status, saying how to check out
the pull request's code, unless the workspace holds its head or its merge commit.
"""

from __future__ import annotations

import pytest

from tests.action.git_repo import git
from tests.action.payloads import pull_request_event
from tests.action.project import REGRESSING_NOTES
from tests.security.harness import Repo

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
