"""Threat: another bot's comment on the pull request carries our hidden marker (copied from
ours, or planted), and `comment: update` takes it for our sticky comment: it overwrites that
bot's comment where the token may edit it, or fails the run where it may not."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.security.entry import World, new_world
from tests.security.harness import MARKER
from tests.support.fake_github import GITHUB_ACTIONS_BOT, FakeGitHub
from tests.support.runner_env import TOKEN

OTHER_BOT = {"login": "release-notes[bot]", "id": 7, "type": "Bot"}
APP = {"login": "retrieval-checks[bot]", "id": 99, "type": "Bot"}
PLANTED = f"{MARKER}\n✅ **Passed**: nothing to see here"


def _world(tmp_path: Path, **github: Any) -> Iterator[World]:
    with FakeGitHub(token=TOKEN, repository="octo/notes", **github) as api:
        yield new_world(tmp_path, api)


@pytest.fixture(params=[{}, {"app": APP}], ids=["GITHUB_TOKEN", "app-token"])
def world(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[World]:
    yield from _world(tmp_path, **request.param)


def test_another_bots_comment_with_our_marker_is_never_taken_for_ours(world: World) -> None:
    base = world.head()
    first = world.commit({"README.md": "# notes search, reworded\n"})
    second = world.commit({"README.md": "# notes search, reworded again\n"})
    world.github.add_pull(7, head_sha=first, base_sha=base)
    planted = world.github.add_comment(7, PLANTED, author=OTHER_BOT)

    runs = [world.pull_request(7, base, head) for head in (first, second)]

    assert [run.returncode for run in runs] == [0, 0], runs[-1].log
    theirs, ours = world.github.comments_on(7)
    assert (theirs["id"], theirs["body"]) == (planted["id"], PLANTED)  # left as it was
    assert ours["user"]["login"] == world.github.comment_author["login"]
    assert ours["body"].startswith(MARKER)
    # The second run edited our own comment, and only that one.
    edits = world.github.requests_to("PATCH", "/issues/comments/")
    assert [request.path.rsplit("/", 1)[-1] for request in edits] == [str(ours["id"])]


@pytest.mark.parametrize(
    "theirs",
    [
        f"Thanks! Your description:\n\n> {MARKER}\n> please review",
        pytest.param(
            f"{MARKER}\nCopied from the pull request's description, marker first.",
            marks=pytest.mark.slow,
        ),
        pytest.param(
            f"Quoted:\n{MARKER}\n<!-- retrieval-eval-evaluated:{'a' * 40} -->\n✅ passed",
            marks=pytest.mark.slow,
        ),
    ],
    ids=["quoted", "marker-first", "header-later"],
)
def test_another_workflows_comment_by_the_same_bot_is_never_taken_for_ours(
    tmp_path: Path, theirs: str
) -> None:
    """Every workflow of the repository posts as github-actions[bot]: the author alone
    cannot tell its comment from ours, so the comment's shape must."""
    for world in _world(tmp_path):
        base = world.head()
        head = world.commit({"README.md": "# notes search, reworded\n"})
        world.github.add_pull(7, head_sha=head, base_sha=base)
        planted = world.github.add_comment(7, theirs, author=GITHUB_ACTIONS_BOT)

        first = world.pull_request(7, base, head)
        second = world.pull_request(7, base, head)

        assert [first.returncode, second.returncode] == [0, 0], second.log
        other, ours = world.github.comments_on(7)
        assert (other["id"], other["body"]) == (planted["id"], theirs)
        assert ours["body"].startswith(MARKER)
        edits = world.github.requests_to("PATCH", "/issues/comments/")
        assert [request.path.rsplit("/", 1)[-1] for request in edits] == [str(ours["id"])]
