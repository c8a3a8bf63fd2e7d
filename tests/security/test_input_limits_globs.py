"""Threat: a pull request names its files so that matching them against `paths` takes minutes.

A pattern with two ``**`` took time quadratic in a file name's length to match
(0.16 s for one 4,000-character name, and GitHub lists 3,000 files), so a pull
request of long names kept the Action busy past the job's patience. Matching is now
linear in the name: the run decides to skip as quickly as for ordinary names.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.action.git_repo import git
from tests.action.payloads import pull_request_event
from tests.security.entry import World, world_in
from tests.support.fake_github import FILES_LISTING_CAP


@pytest.fixture
def world(tmp_path: Path) -> Iterator[World]:
    yield from world_in(tmp_path)


@pytest.mark.slow
def test_thousands_of_long_file_names_against_two_globstars_end_in_a_quick_skip(
    world: World,
) -> None:
    base = world.head()
    head = world.commit({"README.md": "# notes search, reworded\n"})
    # Each name is about 4,000 characters of folders the pattern's `**` can take apart.
    # One short of the listing's cap, so that the API's listing is the one used.
    names = ["notes/" * 660 + f"{i}.txt" for i in range(FILES_LISTING_CAP - 1)]
    world.github.add_pull(7, head_sha=head, base_sha=base, files=names)
    git(world.workspace, "checkout", "-q", head)
    payload = pull_request_event(number=7, head_sha=head, base_sha=base, changed_files=len(names))

    run = world.action("pull_request", payload, sha="e" * 40, paths="**/notes/**/*.md")

    assert run.returncode == 0, run.log
    assert run.outputs["verdict"] == "skipped", run.log
    [status] = world.github.statuses_for(head)
    assert status["state"] == "success"
    assert status["description"].startswith("skipped")
    assert len(world.github.requests_to("GET", r"/pulls/7/files$")) == FILES_LISTING_CAP // 100
