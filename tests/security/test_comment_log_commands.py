"""Threat: a name or a retriever's output from the pull request speaks to the runner in our
voice: a line break followed by ``::stop-commands::…`` and a forged
``::notice title=retrieval-eval::Passed`` (or a ``##[warning]`` anywhere in a line) in what
the Action writes to its log.

The runner obeys only the commands the Action itself writes: every user string in the log
is escaped by one function, every other line is defused, and what a retriever said is
relayed between ``::stop-commands::TOKEN`` and ``::TOKEN::`` with a fresh token.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.security.entry import World, world_in
from tests.support.runner_log import Command, obeyed_commands


@pytest.fixture
def world(tmp_path: Path) -> Iterator[World]:
    yield from world_in(tmp_path)


FORGED = "::notice title=retrieval-eval::Passed"
NAME = f"evil\n::stop-commands::abc\n{FORGED}\n##[warning]forged"
SAYS = f"""\
import sys
print("{FORGED}", file=sys.stderr)
print("  ::stop-commands::pause", file=sys.stderr)
print("\\r::error::forged error", file=sys.stderr)
print("see ##[warning]forged v1", file=sys.stderr)
sys.exit(3)
"""
OURS = {"add-mask", "group", "endgroup", "error", "warning", "notice", "stop-commands", "resume"}


def _forged(commands: list[Command]) -> list[Command]:
    """The commands the pull request wrote (ours may quote them in their data, which the
    runner does not read for commands)."""
    forged = {
        ("notice", "Passed"),
        ("stop-commands", "abc"),
        ("stop-commands", "pause"),
        ("error", "forged error"),
        ("warning", "forged"),
        ("warning", "forged v1"),
    }
    return [
        command
        for command in commands
        if command.name not in OURS or (command.name, command.data.strip()) in forged
    ]


def _config(world: World, failing: bool) -> str:
    config = (world.workspace / "retrieval-eval.toml").read_text(encoding="utf-8")
    command = [sys.executable, "says.py"] if failing else [sys.executable, "-c", "0"]
    return config + (
        f'\n[challengers.{json.dumps(NAME)}]\nretriever = "custom"\n\n'
        f"[challengers.{json.dumps(NAME)}.custom]\ncommand = {json.dumps(command)}\n"
    )


def test_a_challengers_name_and_its_output_cannot_issue_a_workflow_command(
    world: World,
) -> None:
    base = world.head()
    head = world.commit(
        {"says.py": SAYS, "retrieval-eval.toml": _config(world, failing=True)},
        "a challenger with a name that talks to the runner",
    )

    run = world.pull_request(7, base, head)

    assert run.returncode == 0, run.log  # a challenger never fails the run
    stdout, stderr = obeyed_commands(run.stdout), obeyed_commands(run.stderr)
    assert _forged(stdout) == [] and _forged(stderr) == [], run.log
    # The runner still reads the verdict: our last command is the notice that ends the log.
    assert stdout[-1].name == "notice" and stdout[-1].properties == "title=retrieval-eval"
    assert stdout[-1].data.startswith(run.outputs["verdict"])
    # The warning names the challenger, its line breaks shown rather than obeyed.
    assert any(c.name == "warning" and "evil" in c.data for c in stdout), run.log


def test_a_failing_retrievers_words_are_relayed_with_commands_stopped(world: World) -> None:
    config = (world.workspace / "retrieval-eval.toml").read_text(encoding="utf-8")
    base = world.commit(
        {
            "says.py": SAYS,
            "retrieval-eval.toml": config
            + '\n[dataset_retrievers]\n"keyword.jsonl" = "custom"\n\n[retrievers.custom]\n'
            + f"command = {json.dumps([sys.executable, 'says.py'])}\n",
        },
        "a retriever that talks to the runner",
    )
    head = world.commit({"README.md": "# notes\n"}, "a change")

    run = world.pull_request(7, base, head)

    assert run.returncode == 2, run.log
    stdout = obeyed_commands(run.stdout)
    assert _forged(stdout) == [] and _forged(obeyed_commands(run.stderr)) == [], run.log
    # What it said is in the log as it said it, between a stop and a resume of our own.
    names = [c.name for c in stdout]
    stop = names.index("stop-commands")
    assert names[stop + 1] == "resume"
    assert FORGED in run.stdout
    assert stdout[-1].name == "error" and "exited with code 3" in stdout[-1].data
