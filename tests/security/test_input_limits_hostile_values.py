"""Threat: values no real input holds (nesting thousands deep, a cost of 1e308) read as "a bug".

Each is refused with an error naming where it came from and what to fix, never
reported as an unexpected exception.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from retrieval_eval.load.markdown_notes import MAX_FRONT_MATTER_DEPTH
from tests.security.entry import World, run_cli, world_in
from tests.security.test_processes_command import _use_command


@pytest.fixture
def world(tmp_path: Path) -> Iterator[World]:
    yield from world_in(tmp_path)


@pytest.mark.parametrize("style", ["flow", "block"])
def test_front_matter_nested_thousands_deep_is_an_error_naming_the_note(
    world: World, style: str
) -> None:
    if style == "flow":
        value = "[" * 5000 + "]" * 5000
    else:
        value = "\n" + "".join(" " * level + "- \n" for level in range(0, 10_000, 2))
    world.commit(
        {"datasets/corpus/travel/deep.md": f"---\nmeta: {value}\n---\n# Deep\n\nA note.\n"},
        "a deeply nested front matter",
    )

    run = run_cli(world.workspace, "run")

    assert run.returncode == 2, run.log
    line = 2 if style == "flow" else 2 + MAX_FRONT_MATTER_DEPTH  # where it got too deep
    assert (
        f"travel/deep.md:{line}: front matter is nested more than {MAX_FRONT_MATTER_DEPTH} levels"
        in run.stderr
    ), run.log
    assert "unexpected" not in run.log


def test_a_cost_near_the_float_maximum_is_an_error_naming_the_retriever(world: World) -> None:
    script = (
        "docs = []\n"
        "for line in sys.stdin:\n"
        "    request = json.loads(line)\n"
        "    if request['op'] == 'index':\n"
        "        docs = [d['id'] for d in request['documents']]\n"
        "        answer = {'ok': True}\n"
        "    else:\n"
        "        hits = [{'id': d, 'score': 1.0} for d in docs[:1]]\n"
        "        answer = {'hits': hits, 'cost_usd': 1e308}\n"
        "    print(json.dumps(answer), flush=True)\n"
    )
    _use_command(world, script)

    run = run_cli(world.workspace, "run")

    assert run.returncode == 2, run.log
    assert "cost_usd must be a number from 0 to 1,000,000" in run.stderr, run.log
    assert "custom retriever" in run.stderr
    assert "unexpected" not in run.log
