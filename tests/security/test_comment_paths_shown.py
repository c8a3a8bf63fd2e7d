"""Threat: an error in a file that a pull request (or its base commit) controls is reported
with the runner's absolute paths, which show the runner's layout and fill the commit status's
140 characters so that the reason is cut off; every place a user reads names the file as
the repository does."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.action.git_repo import commit_all
from tests.security.entry import ActionRun, World, run_cli, world_in


@pytest.fixture
def world(tmp_path: Path) -> Iterator[World]:
    yield from world_in(tmp_path)


def _everything_read(world: World, run: ActionRun, head: str, number: int) -> list[str]:
    """The status, the comment, the job summary and the annotations."""
    return [
        *(status["description"] for status in world.github.statuses_for(head)),
        *(comment["body"] for comment in world.github.comments_on(number)),
        run.summary,
        *(line for line in run.stdout.splitlines() if line.startswith(("::error", "::warning"))),
    ]


def test_a_refused_note_is_named_relative_to_the_repository(world: World, tmp_path: Path) -> None:
    base = world.head()
    outside = tmp_path / "outside.md"
    outside.write_text("# elsewhere\n\nnot in the repository\n")
    note = world.workspace / "datasets" / "corpus" / "travel" / "lisbon.md"
    note.unlink()
    note.symlink_to(outside)
    head = commit_all(world.workspace, "a note that links out")

    run = world.pull_request(4, base, head)
    cli = run_cli(world.workspace, "run")

    assert run.returncode == 2, run.log
    [status] = world.github.statuses_for(head)
    assert status["description"].startswith(
        "error: datasets/corpus/travel/lisbon.md: resolves to "
    ), status
    read = _everything_read(world, run, head, 4)
    assert all(str(world.workspace) not in text for text in read), read
    # The first error is the annotation on the file; the log's last line repeats the verdict.
    annotation = next(line for line in run.stdout.splitlines() if line.startswith("::error"))
    assert annotation.startswith("::error file=datasets/corpus/travel/lisbon.md::")  # on the file
    assert "outside the repository (.)" in annotation
    assert "error: datasets/corpus/travel/lisbon.md: resolves to " in cli.stderr
    assert str(world.workspace) not in cli.stderr


def test_the_base_commits_baseline_is_named_as_in_the_repository_not_its_scratch_copy(
    world: World,
) -> None:
    base = world.commit({"baseline.json": '{"schema_version": 1, "datasets": 7}\n'}, "broken")
    head = world.commit({"README.md": "# notes search, reworded\n"})

    run = world.pull_request(4, base, head)

    assert run.returncode == 2, run.log
    [status] = world.github.statuses_for(head)
    assert status["description"].startswith("error: baseline.json: the baseline is malformed")
    read = _everything_read(world, run, head, 4)
    assert all("retrieval-eval-base-" not in text for text in read), read
    assert "in the base commit's version" in run.summary
