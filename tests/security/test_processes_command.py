"""Threat: the retriever command misbehaves, and the run must still end, and end clean.

Every exchange with the command (writing a request, reading its answer,
shutting it down) is bounded by ``timeout_s``; the command runs in its own
process group, and the whole group is killed, so nothing it started outlives
the run or keeps it waiting.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.security.entry import World, run_cli, world_in


@pytest.fixture
def world(tmp_path: Path) -> Iterator[World]:
    yield from world_in(tmp_path)


SERVE = """\
import json, os, subprocess, sys
def serve(on_search=None):
    docs = []
    for line in sys.stdin:
        request = json.loads(line)
        if request["op"] == "index":
            docs = [d["id"] for d in request["documents"]]
            answer = {"ok": True}
        else:
            if on_search:
                on_search()
            answer = {"hits": [{"id": d, "score": 1.0 / (i + 1)} for i, d in enumerate(docs)]}
        print(json.dumps(answer), flush=True)
def grandchild(pid_file):
    # Inherits our stdout and stderr, as a daemon started from a shell script would.
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3600)"])
    with open(pid_file, "w") as handle:
        handle.write(str(child.pid))
"""


def _use_command(world: World, script: str, *args: str, timeout_s: float = 2.0) -> None:
    config = (world.workspace / "retrieval-eval.toml").read_text(encoding="utf-8")
    config += (
        '\n[dataset_retrievers]\n"keyword.jsonl" = "custom"\n\n[retrievers.custom]\n'
        f"command = {json.dumps([sys.executable, 'search.py', *args])}\n"
        f"timeout_s = {timeout_s}\n"
    )
    world.commit({"search.py": SERVE + script, "retrieval-eval.toml": config}, "my retriever")


def _alive(pid_file: Path) -> bool:
    pid = int(pid_file.read_text(encoding="utf-8"))
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie is dead; only its parent (reaped by init here) would still see it.
    with open(f"/proc/{pid}/stat", encoding="utf-8") as handle:
        return handle.read().split(") ", 1)[1][0] != "Z"


def _big_note(world: World) -> None:
    """A corpus whose index request is well over a pipe's 64 KiB buffer."""
    paragraph = "Lorem ipsum dolor sit amet, a long note about nothing in particular. " * 40
    world.commit({"datasets/corpus/big/note.md": "# Big\n\n" + paragraph * 50}, "a big note")


def test_a_command_that_never_reads_its_stdin_times_out_on_a_big_index_request(
    world: World,
) -> None:
    _big_note(world)
    pid_file = world.workspace / "pid"
    _use_command(
        world,
        "open(sys.argv[1], 'w').write(str(os.getpid()))\nimport time\ntime.sleep(3600)\n",
        str(pid_file),
    )

    run = run_cli(world.workspace, "run")

    assert run.returncode == 2, run.log
    assert "did not read the `index` request within 2 s" in run.stderr
    assert not _alive(pid_file)


def test_a_background_grandchild_does_not_hold_up_the_end_of_the_run(world: World) -> None:
    pid_file = world.workspace / "grandchild.pid"
    _use_command(world, "grandchild(sys.argv[1])\nserve()\n", str(pid_file))

    run = run_cli(world.workspace, "run")

    assert run.returncode == 0, run.log
    assert "baseline established" in run.stderr.lower() or "baseline" in run.stderr
    assert not _alive(pid_file), "the command's background process outlived the run"


def test_a_command_that_hangs_on_a_search_is_killed_with_everything_it_started(
    world: World,
) -> None:
    pid_file = world.workspace / "grandchild.pid"
    script = (
        "import time\n"
        "def hang():\n    grandchild(sys.argv[1])\n    time.sleep(3600)\n"
        "serve(on_search=hang)\n"
    )
    _use_command(world, script, str(pid_file), timeout_s=1.5)

    run = run_cli(world.workspace, "run")

    assert run.returncode == 2, run.log
    assert "did not answer `search` within 1.5 s" in run.stderr
    assert not _alive(pid_file)


@pytest.mark.parametrize("signal_first", [False, True], ids=["exits", "ignores-sigterm"])
def test_a_command_that_will_not_exit_when_its_stdin_closes_is_stopped(
    world: World, signal_first: bool
) -> None:
    pid_file = world.workspace / "pid"
    script = (
        "import signal, time\n"
        + ("signal.signal(signal.SIGTERM, signal.SIG_IGN)\n" if signal_first else "")
        + "open(sys.argv[1], 'w').write(str(os.getpid()))\n"
        "serve()\ntime.sleep(3600)\n"
    )
    _use_command(world, script, str(pid_file), timeout_s=1.0)

    run = run_cli(world.workspace, "run")

    assert run.returncode == 0, run.log
    assert not _alive(pid_file)
