"""Threat: the files a fork's run leaves for `mode: publish` are a 2 GB comment, a FIFO, a
symlink to a file outside the artifact, or JSON nested 100,000 deep, to exhaust the
privileged job's memory, hang it, post what the link points at, or crash it as a bug; each
must be refused with a `FILE: message` error before it is read."""

from __future__ import annotations

import json
import os
import resource
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.action.payloads import workflow_run_event
from tests.security.entry import ActionRun, World, world_in

HEAD = "a" * 40
REPORT = "retrieval-eval-report"


@pytest.fixture
def world(tmp_path: Path) -> Iterator[World]:
    yield from world_in(tmp_path)


def _metadata(**changes: object) -> str:
    fields: dict[str, object] = {
        "schema_version": 1,
        "pr_number": 3,
        "head_sha": HEAD,
        "verdict": "passed",
        "status_description": "passed",
        "comment_id": "retrieval-eval",
        "has_comment": True,
    }
    fields.update(changes)
    return json.dumps(fields)


def _memory_capped() -> None:
    """A comment read whole stops at 1 GiB (a MemoryError) instead of taking the machine."""
    resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))


def _publish(world: World, make_files: Callable[[Path], None]) -> ActionRun:
    world.github.add_pull(3, head_sha=HEAD, base_sha="b" * 40, head_repo="mallory/notes")
    report_dir = world.workspace / REPORT
    report_dir.mkdir()
    make_files(report_dir)
    return world.action(
        "workflow_run",
        workflow_run_event(HEAD),
        sha="c" * 40,
        preexec_fn=_memory_capped,
        mode="publish",
    )


def _assert_refused(world: World, run: ActionRun, file: str, reason: str) -> None:
    assert run.returncode == 2, run.log
    assert run.outputs["verdict"] == "error"
    # The first error says why; the log's last line repeats the verdict.
    error = next(line for line in run.stdout.splitlines() if line.startswith("::error"))
    # Repository-relative, in the annotation's file and in the message alike.
    assert error.startswith(f"::error file={REPORT}/{file}::"), error
    assert f"::Refusing to publish: {REPORT}/{file}: " in error, error
    assert reason in error, error
    assert "unexpected" not in run.log and "Traceback" not in run.log
    assert world.github.comments_on(3) == []
    assert world.github.statuses_for(HEAD) == []


def _huge_comment(report_dir: Path) -> None:
    (report_dir / "fork-publish.json").write_text(_metadata())
    with (report_dir / "fork-comment.md").open("wb") as handle:
        handle.truncate(2 << 30)  # 2 GB of NUL bytes (valid UTF-8), sparse on disk


def _fifo_comment(report_dir: Path) -> None:
    (report_dir / "fork-publish.json").write_text(_metadata())
    os.mkfifo(report_dir / "fork-comment.md")


def _comment_links_out(report_dir: Path) -> None:
    (report_dir / "fork-publish.json").write_text(_metadata())
    secret = report_dir.parent.parent / "runner-only.txt"
    secret.write_text("what only the privileged job can read\n")
    (report_dir / "fork-comment.md").symlink_to(secret)


def _metadata_links_out(report_dir: Path) -> None:
    outside = report_dir.parent.parent / "metadata.json"
    outside.write_text(_metadata(has_comment=False))
    (report_dir / "fork-publish.json").symlink_to(outside)


def _nested(depth: int) -> Callable[[Path], None]:
    def make(report_dir: Path) -> None:
        (report_dir / "fork-publish.json").write_text("[" * depth + "]" * depth)

    return make


@pytest.mark.parametrize(
    ("make_files", "file", "reason"),
    [
        (_huge_comment, "fork-comment.md", "longer than"),
        (_fifo_comment, "fork-comment.md", "not a regular file"),
        (_comment_links_out, "fork-comment.md", "symlink"),
        (_metadata_links_out, "fork-publish.json", "symlink"),
        (_nested(100_000), "fork-publish.json", "longer than 65,536 bytes"),
        (_nested(30_000), "fork-publish.json", "nested too deeply"),
    ],
    ids=[
        "2-GB-comment",
        "fifo-comment",
        "comment-symlink",
        "metadata-symlink",
        "nested-100k",
        "nested-30k",
    ],
)
def test_a_hostile_fork_file_is_refused_before_it_is_read(
    world: World, make_files: Callable[[Path], None], file: str, reason: str
) -> None:
    run = _publish(world, make_files)

    _assert_refused(world, run, file, reason)
