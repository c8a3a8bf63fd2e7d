"""Threat: the run is cut short. A cancelled job (or one past its ``timeout-minutes``) gets
SIGINT then SIGTERM from the runner, at any point of the run. It still ends with an
``error`` status, the job summary and ``verdict=error`` (a required check must not wait
for ever), and nothing it started lives on.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.security.entry import World, world_in
from tests.security.test_processes_command import _alive, _use_command


@pytest.fixture
def world(tmp_path: Path) -> Iterator[World]:
    yield from world_in(tmp_path)


@pytest.mark.parametrize("signal_name", ["SIGTERM", "SIGINT"])
def test_a_stopped_run_sets_an_error_status_and_leaves_no_retriever_behind(
    world: World, signal_name: str
) -> None:
    """The retriever stands in for the runner: it signals retrieval-eval mid-evaluation."""
    pid_file = world.workspace / "pid"
    script = (
        "import signal, time\n"
        "def stop():\n"
        "    open(sys.argv[1], 'w').write(str(os.getpid()))\n"
        f"    os.kill(os.getppid(), signal.{signal_name})\n"
        "    time.sleep(3600)\n"
        "serve(on_search=stop)\n"
    )
    _use_command(world, script, str(pid_file), timeout_s=60)
    sha = world.head()

    run = world.push(sha)

    assert run.returncode == 2, run.log
    assert run.outputs["verdict"] == "error"
    # The log says why when no status landed (e.g. the calls after the stop ran out of time).
    statuses = world.github.statuses_for(sha)
    assert len(statuses) == 1, run.log
    [status] = statuses
    assert status["state"] == "error"
    assert f"stopped ({signal_name})" in status["description"]
    assert f"stopped ({signal_name})" in run.summary
    assert "Traceback" not in run.log
    assert not _alive(pid_file), "the retriever outlived the stopped run"


def test_a_run_stopped_before_the_evaluation_still_sets_an_error_status(
    world: World, tmp_path: Path
) -> None:
    """A stop while the gate's settings are read from the base commit, before anything is
    evaluated: `git` (first on PATH here) stands in for the runner and signals the Action."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    real_git = shutil.which("git")
    assert real_git is not None
    fake_git = bin_dir / "git"
    fake_git.write_text(f'#!/bin/sh\nkill -TERM "$PPID"\nexec {real_git} "$@"\n')
    fake_git.chmod(0o755)
    base = world.head()
    head = world.commit({"README.md": "# notes search, reworded\n"})

    run = world.pull_request(
        8, base, head, extra_env={"PATH": f"{bin_dir}:{os.environ.get('PATH', '/usr/bin:/bin')}"}
    )

    assert run.returncode == 2, run.log
    assert run.outputs["verdict"] == "error"
    [status] = world.github.statuses_for(head)
    assert status["state"] == "error"
    assert "stopped (SIGTERM)" in status["description"]
    assert "stopped (SIGTERM)" in run.summary
    assert "Traceback" not in run.log
