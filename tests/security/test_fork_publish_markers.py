"""Threat: a fork's own run writes the comment that `mode: publish` posts with the base
repository's token. The fork's text may carry another evaluation's hidden marker; posted
as it is, that evaluation's next run would take the fork's comment for its own sticky
comment and overwrite it (or the fork's text would stand in for that evaluation's)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from retrieval_eval.action.comment import find_own_comment
from retrieval_eval.action.github_api import GITHUB_ACTIONS_BOT, Comment
from tests.action.payloads import workflow_run_event
from tests.render.github_html import read
from tests.support.action import run_action
from tests.support.fake_github import FakeGitHub
from tests.support.runner_env import TOKEN

HEAD = "a" * 40
FORGED = "<!-- retrieval-eval:nightly-benchmark -->"


@pytest.fixture
def github() -> Iterator[FakeGitHub]:
    with FakeGitHub(token=TOKEN, repository="octo/notes") as api:
        yield api


def test_a_forks_comment_cannot_carry_another_evaluations_marker(
    tmp_path: Path, github: FakeGitHub
) -> None:
    github.add_pull(3, head_sha=HEAD, base_sha="b" * 40, head_repo="mallory/notes")
    report_dir = tmp_path / "ws" / "retrieval-eval-report"
    report_dir.mkdir(parents=True)
    (report_dir / "fork-publish.json").write_text(
        json.dumps(
            {
                "schema_version": 1,
                "pr_number": 3,
                "head_sha": HEAD,
                "verdict": "passed",
                "status_description": "passed",
                "comment_id": "retrieval-eval",
                "has_comment": True,
            }
        )
    )
    (report_dir / "fork-comment.md").write_text(f"✅ **Passed**\n\n{FORGED}\n")

    published = run_action(
        tmp_path / "ws",
        tmp_path / "run",
        event_name="workflow_run",
        payload=workflow_run_event(head_sha=HEAD),
        api_url=github.base_url,
        sha="c" * 40,
        mode="publish",
    )

    assert published.returncode == 0, published.log
    [posted] = github.comments_on(3)
    as_seen = Comment(posted["id"], posted["body"], posted["user"]["login"], posted["html_url"])
    login = GITHUB_ACTIONS_BOT
    assert find_own_comment([as_seen], comment_id="nightly-benchmark", login=login) is None
    assert find_own_comment([as_seen], comment_id="retrieval-eval", login=login) == as_seen
    assert FORGED in read(posted["body"]).text  # shown to the reader, not hidden
