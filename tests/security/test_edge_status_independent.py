"""Threat: GitHub refuses the comment. A required check that waits on our status
must still get it: the status is set first, and independently of the comment.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.security.entry import World, world_in
from tests.support.fake_github import Fault


@pytest.fixture
def world(tmp_path: Path) -> Iterator[World]:
    yield from world_in(tmp_path)


@pytest.mark.parametrize("refusal", [403, 500])
def test_a_refused_comment_still_leaves_the_verdicts_status(world: World, refusal: int) -> None:
    base = world.head()
    head = world.commit({"README.md": "# notes\n\nv2\n"}, "v2")
    world.github.inject(
        Fault(
            path=r"/issues/\d+/comments$",
            method="POST",
            status=refusal,
            body={"message": "Resource not accessible by integration"},
            times=None,
        )
    )

    run = world.pull_request(7, base, head)

    assert run.returncode == 2, run.log  # publishing failed: the step says so
    [status] = world.github.statuses_for(head)
    assert status["state"] == "success"  # ... and the check still shows the verdict
    assert world.github.comments_on(7) == []
    assert f"commenting on #7: GitHub answered {refusal}" in run.stdout
    assert run.outputs["verdict"] == "baseline-established"
