"""Threat: a fork's own run writes the comment that `mode: publish` posts with the base
repository's token, spelling a mention as `&#64;name`, `&#x40;name` or after a backtick so
that it notifies whoever the fork chooses, or leaves `head_sha` out of reach so that its
files alone name the commit the verdict is set on."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from retrieval_eval.action.fork import neutralize_mentions
from tests.action.payloads import workflow_run_event
from tests.render.github_html import read
from tests.security.entry import World, world_in

HEAD = "a" * 40
# What GitHub links as a mention in the rendered text: "@" after no ASCII word character.
MENTION = re.compile(r"(?<![A-Za-z0-9_])@[A-Za-z0-9]")


@pytest.fixture
def world(tmp_path: Path) -> Iterator[World]:
    yield from world_in(tmp_path)


def _fork_left(world: World, comment: str, *, head_sha: str = HEAD) -> None:
    world.github.add_pull(3, head_sha=HEAD, base_sha="b" * 40, head_repo="mallory/notes")
    report_dir = world.workspace / "retrieval-eval-report"
    report_dir.mkdir(exist_ok=True)
    metadata = {
        "schema_version": 1,
        "pr_number": 3,
        "head_sha": head_sha,
        "verdict": "passed",
        "status_description": "passed",
        "comment_id": "retrieval-eval",
        "has_comment": True,
    }
    (report_dir / "fork-publish.json").write_text(json.dumps(metadata), encoding="utf-8")
    (report_dir / "fork-comment.md").write_text(comment, encoding="utf-8")


@pytest.mark.parametrize(
    "spelling",
    [
        "&#64;maintainer",
        "&#x40;maintainer",
        "&#X0040;maintainer",
        "&commat;maintainer",
        "`@maintainer",
    ],
)
def test_a_mention_spelled_as_a_character_reference_or_after_a_backtick_notifies_no_one(
    world: World, spelling: str
) -> None:
    _fork_left(world, f"✅ **Passed**\n\nThanks {spelling}!\n")

    run = world.action("workflow_run", workflow_run_event(HEAD), sha="c" * 40, mode="publish")

    assert run.returncode == 0, run.log
    [posted] = world.github.comments_on(3)
    text = read(posted["body"]).text
    assert "maintainer" in text
    assert MENTION.search(text) is None, text


def test_a_workflow_run_payload_without_head_sha_publishes_nothing(world: World) -> None:
    other = "d" * 40  # a commit the fork names in its files; no run evaluated it
    _fork_left(world, "✅ **Passed**\n", head_sha=other)
    payload = workflow_run_event(HEAD)
    del payload["workflow_run"]["head_sha"]

    run = world.action("workflow_run", payload, sha="c" * 40, mode="publish")

    assert run.returncode == 2, run.log
    assert "workflow_run.head_sha" in run.stdout
    assert world.github.statuses_for(other) == []
    assert world.github.comments_on(3) == []


_PIECES = [
    "@",
    "&#64;",
    "&#x40;",
    "&#X40;",
    "&#0064;",
    "&commat;",
    "&#64",
    "&amp;",
    "`",
    "``",
    "\\",
    "bob",
    "a",
    "_",
    " ",
    "\n",
    "*",
    "[",
    "](x)",
    "<b>",
    "</b>",
    "é",
    ";",
    "&",
    "#",
]


@given(st.lists(st.sampled_from(_PIECES), max_size=30).map("".join))
def test_no_text_a_fork_writes_renders_a_mention(text: str) -> None:
    assert MENTION.search(read(neutralize_mentions(text)).text) is None
