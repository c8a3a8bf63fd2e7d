"""Threat: a pull request replaces `retrieval-eval-history.jsonl` (it only draws the
report's sparklines) with a symlink to `/proc/self/fd/1`, `/dev/zero` or a file outside
the repository, or breaks a line of it, to hang the run, exhaust its memory, put outside
numbers in the report or fail the pull request; each must leave a warning and a normal
verdict instead."""

from __future__ import annotations

import json
import os
import resource
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from retrieval_eval.compare.history import read_trend
from retrieval_eval.settings import HISTORY_FILE
from tests.action.git_repo import commit_all, git
from tests.security.entry import ActionRun, World, world_in

HISTORY_LINE = '{"commit": "%s", "date": "2026-01-0%dT00:00:00Z", "aggregates": %s}\n'


@pytest.fixture
def world(tmp_path: Path) -> Iterator[World]:
    yield from world_in(tmp_path)


def _established(world: World) -> str:
    """A push to main writes baseline.json and the first history line; both are committed."""
    pushed = world.push(world.head())
    assert pushed.returncode == 0, pushed.log
    assert (world.workspace / HISTORY_FILE).is_file()
    return commit_all(world.workspace, "retrieval-eval: baseline and history")


def _pull_request_with_history(
    world: World, make_history: Callable[[Path], None]
) -> tuple[ActionRun, str]:
    base = _established(world)
    git(world.workspace, "checkout", "-q", "-b", "history", base)
    history = world.workspace / HISTORY_FILE
    history.unlink()
    make_history(history)
    head = commit_all(world.workspace, "replace the history")
    return world.pull_request(5, base, head), head


def _memory_capped() -> None:
    """Reading /dev/zero into memory stops at 2 GiB (a MemoryError) instead of the machine."""
    resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))


def _assert_warned_and_passed(world: World, run: ActionRun, head: str, reason: str) -> None:
    assert run.returncode == 0, run.log
    assert run.outputs["verdict"] == "passed"
    assert [s["state"] for s in world.github.statuses_for(head)] == ["success"]
    [warning] = [line for line in run.stdout.splitlines() if line.startswith("::warning::")]
    assert warning.startswith(f"::warning::{HISTORY_FILE}:"), warning  # repository-relative
    assert reason in warning and "no trend sparklines" in warning
    report = json.loads(Path(run.outputs["report-json"]).read_text(encoding="utf-8"))
    assert report["history"] == {}


@pytest.mark.parametrize(
    ("target", "reason"),
    [
        ("/proc/self/fd/1", "outside the repository"),
        ("/dev/zero", "outside the repository"),
    ],
    ids=["own-stdout", "dev-zero"],
)
def test_a_history_symlinked_to_a_stream_or_device_is_refused_with_a_warning(
    world: World, target: str, reason: str
) -> None:
    base = _established(world)
    git(world.workspace, "checkout", "-q", "-b", "history", base)
    history = world.workspace / HISTORY_FILE
    history.unlink()
    history.symlink_to(target)
    head = commit_all(world.workspace, "history is a stream")

    run = world.pull_request(5, base, head, preexec_fn=_memory_capped)

    _assert_warned_and_passed(world, run, head, reason)


def test_a_history_symlinked_outside_the_repository_draws_no_sparklines(
    world: World, tmp_path: Path
) -> None:
    outside = tmp_path / "elsewhere.jsonl"
    planted = json.dumps({"keyword.jsonl": {"mrr@10": 0.123456}})
    outside.write_text("".join(HISTORY_LINE % ("f" * 40, day, planted) for day in (1, 2, 3)))

    run, head = _pull_request_with_history(world, lambda path: path.symlink_to(outside))

    _assert_warned_and_passed(world, run, head, "outside the repository")
    assert "0.123456" not in run.summary


def test_a_fifo_inside_the_repository_is_refused_without_blocking(world: World) -> None:
    base = _established(world)
    # Git cannot commit a FIFO: the workspace has one where the committed file was.
    history = world.workspace / HISTORY_FILE
    head = world.commit({"README.md": "# notes\n\nA change.\n"})
    git(world.workspace, "checkout", "-q", head)
    history.unlink()
    os.mkfifo(history)

    run = world.pull_request(5, base, head)

    _assert_warned_and_passed(world, run, head, "FIFO")


def test_a_malformed_history_line_is_a_warning_named_relative_to_the_repository(
    world: World,
) -> None:
    def broken(path: Path) -> None:
        path.write_text(HISTORY_LINE % ("a" * 40, 1, "{}") + '{"commit": "x", "aggregates": 7}\n')

    run, head = _pull_request_with_history(world, broken)

    _assert_warned_and_passed(world, run, head, f"{HISTORY_FILE}:2: not a history line")
    workspace = str(world.workspace)
    [warning] = [line for line in run.stdout.splitlines() if line.startswith("::warning::")]
    assert workspace not in warning and workspace not in run.summary


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.binary(max_size=400) | st.text(max_size=400).map(str.encode))
def test_any_history_bytes_give_values_or_a_warning(
    tmp_path_factory: pytest.TempPathFactory, data: bytes
) -> None:
    path = tmp_path_factory.mktemp("history") / HISTORY_FILE
    path.write_bytes(data)

    trend = read_trend(path)

    assert (trend.warning is None) or (trend.values == {} and str(path) in trend.warning)
