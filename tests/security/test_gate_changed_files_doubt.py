"""Threat: a pull request whose changed-files listing comes back empty, with no
`changed_files` count in the event payload to contradict it, is skipped with a success
status, so a regression under a watched path merges ungated."""

from __future__ import annotations

from tests.action.payloads import pull_request_event
from tests.action.project import REGRESSING_NOTES
from tests.security.harness import Repo


def test_an_empty_listing_without_a_count_is_doubt_and_evaluates(repo: Repo) -> None:
    base = repo.establish_baseline()
    repo.branch("worse", base)
    head = repo.commit(REGRESSING_NOTES, "rewrite two notes")
    repo.github.add_pull(21, head_sha=head, base_sha=base, files=[])  # the API lists nothing
    payload = pull_request_event(number=21, head_sha=head, base_sha=base)
    del payload["pull_request"]["changed_files"]  # and nothing says how many to expect

    run = repo.action("pull_request", payload, sha="e" * 40, paths="datasets/**")

    assert run.outputs["verdict"] == "regression", run.log
    assert run.returncode == 1
    assert [s["state"] for s in repo.github.statuses_for(head)] == ["failure"]
    assert "from the git" in run.log  # the names came from `git diff base...head`
