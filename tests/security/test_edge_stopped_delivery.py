"""Threat: the runner's stop request lands while the verdict is being delivered to GitHub.

During a status POST that GitHub is slow to answer, the run must still try the
``error`` status and give up on GitHub within a few seconds (no retries: the runner's
SIGKILL follows). Once the verdict's status is on GitHub, a stop must not turn the
delivered verdict into an error, nor kill the run by the signal: it exits with the
verdict's code. The fake GitHub sends the SIGTERM itself, when the request of interest
arrives, to the ``retrieval-eval action`` process (whose pid the test records as it starts).
"""

from __future__ import annotations

import os
import signal
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.security.entry import World, world_in
from tests.support.fake_github import Fault


@pytest.fixture
def world(tmp_path: Path) -> Iterator[World]:
    yield from world_in(tmp_path)


def _terminator(pid_file: Path) -> tuple[Callable[[], None], Callable[[], None]]:
    """(record the pid, as the child's preexec_fn; send it SIGTERM, from the fake)."""

    def record() -> None:
        pid_file.write_text(str(os.getpid()), encoding="utf-8")

    def terminate() -> None:
        os.kill(int(pid_file.read_text(encoding="utf-8")), signal.SIGTERM)

    return record, terminate


def test_a_stop_during_a_slow_status_post_still_tries_the_error_status_once(
    world: World, tmp_path: Path
) -> None:
    record, terminate = _terminator(tmp_path / "action.pid")
    # The verdict's status never gets an answer; every later one fails with a 502.
    world.github.inject(Fault(path=r"/statuses/", method="POST", delay=3600, on_request=terminate))
    world.github.inject(Fault(path=r"/statuses/", method="POST", status=502, times=None))
    base = world.head()
    head = world.commit({"README.md": "# notes search, reworded\n"})

    # A budget this large would let a run retry the error status for minutes.
    run = world.pull_request(7, base, head, preexec_fn=record, github_retry_seconds="600")

    assert run.returncode == 2, run.log
    assert run.outputs["verdict"] == "error"
    assert "stopped (SIGTERM)" in run.summary
    posts = world.github.requests_to("POST", r"/statuses/")
    assert [post.body["state"] for post in posts] == ["success", "error"], run.log
    assert "Setting the error status failed too" in run.log


def test_a_stop_after_the_verdict_was_delivered_exits_with_the_verdicts_code(
    world: World, tmp_path: Path
) -> None:
    record, terminate = _terminator(tmp_path / "action.pid")
    world.github.inject(Fault(path=r"/comments", method="POST", on_request=terminate))
    base = world.head()
    head = world.commit({"README.md": "# notes search, reworded\n"})

    run = world.pull_request(7, base, head, preexec_fn=record)

    assert world.github.requests_to("POST", r"/comments"), "the stop was never sent"
    assert run.returncode == 0, run.log
    assert run.outputs["verdict"] == "baseline-established"
    assert [s["state"] for s in world.github.statuses_for(head)] == ["success"]
    assert len(world.github.comments_on(7)) == 1
    assert "stopped" not in run.summary


@pytest.mark.slow
def test_a_stop_while_github_hangs_gives_up_on_it_within_the_stops_time(
    world: World, tmp_path: Path
) -> None:
    record, terminate = _terminator(tmp_path / "action.pid")
    # Neither the verdict's status nor the error status ever gets an answer.
    world.github.inject(Fault(path=r"/statuses/", method="POST", delay=3600, on_request=terminate))
    world.github.inject(Fault(path=r"/statuses/", method="POST", delay=3600, times=None))
    base = world.head()
    head = world.commit({"README.md": "# notes search, reworded\n"})

    run = world.pull_request(7, base, head, preexec_fn=record, github_retry_seconds="600")

    assert run.returncode == 2, run.log
    assert run.outputs["verdict"] == "error"
    assert "did not answer within 5 s of the stop request" in run.log, run.log
    posts = world.github.requests_to("POST", r"/statuses/")
    assert [post.body["state"] for post in posts] == ["success", "error"], run.log
