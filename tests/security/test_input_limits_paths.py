"""Threat: corpus and dataset paths that lead somewhere else.

A note or dataset that resolves outside the repository (a symlink to
``/proc/self/environ``, which holds the runner's environment) is refused unless
the user names that folder in ``outside_roots``. Anything that is not a regular
file (a FIFO, ``/dev/zero``) is refused without reading it, so it can neither
hang the run nor fill its memory. Each refusal is a ``FILE: message`` error.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.action.git_repo import commit_all
from tests.security.entry import TOKEN, World, run_cli, world_in


@pytest.fixture
def world(tmp_path: Path) -> Iterator[World]:
    yield from world_in(tmp_path)


def _note(world: World, name: str = "leak") -> Path:
    return world.workspace / "datasets" / "corpus" / f"{name}.md"


def _configure(world: World, extra: str) -> None:
    config = world.workspace / "retrieval-eval.toml"
    config.write_text(extra + config.read_text(encoding="utf-8"), encoding="utf-8")


def test_a_note_symlinked_to_the_process_environment_is_refused(world: World) -> None:
    _note(world).symlink_to("/proc/self/environ")
    base = world.head()
    head = commit_all(world.workspace, "a note that is a symlink")

    cli = run_cli(world.workspace, "run")
    action = world.pull_request(7, base, head)

    assert cli.returncode == 2, cli.log
    assert "error: datasets/corpus/leak.md: resolves to /proc/" in cli.stderr
    assert "outside the repository" in cli.stderr and "outside_roots" in cli.stderr
    assert action.returncode == 2, action.log
    [status] = world.github.statuses_for(head)
    assert status["state"] == "error" and "resolves to /proc/" in status["description"]
    [comment] = world.github.comments_on(7)
    assert "PATH=" not in comment["body"] and "INPUT_" not in comment["body"]


def test_a_folder_named_in_outside_roots_may_hold_notes(world: World, tmp_path: Path) -> None:
    outside = tmp_path / "shared-notes"
    outside.mkdir()
    (outside / "extra.md").write_text("# Extra\n\nA note kept outside the repository.\n")
    _note(world, "extra").symlink_to(outside / "extra.md")

    refused = run_cli(world.workspace, "run")
    _configure(world, f'outside_roots = ["{outside}"]\n')
    allowed = run_cli(world.workspace, "run")

    assert refused.returncode == 2 and "outside the repository" in refused.stderr
    assert allowed.returncode == 0, allowed.log


def test_a_fifo_in_the_corpus_is_refused_without_waiting_for_a_writer(world: World) -> None:
    os.mkfifo(_note(world, "pipe"))

    run = run_cli(world.workspace, "run")

    assert run.returncode == 2, run.log
    assert "datasets/corpus/pipe.md: is a FIFO (named pipe), not a regular file" in run.stderr


def test_dev_zero_is_refused_even_inside_an_allowed_root(world: World) -> None:
    """Named in outside_roots or not, a device is never read (it would fill memory)."""
    _note(world, "zero").symlink_to("/dev/zero")
    _configure(world, 'outside_roots = ["/dev"]\n')

    run = run_cli(world.workspace, "run")

    assert run.returncode == 2, run.log
    assert "datasets/corpus/zero.md: is a character device, not a regular file" in run.stderr


def test_a_dataset_file_that_is_a_fifo_is_refused_by_validate(world: World) -> None:
    dataset = world.workspace / "datasets" / "keyword.jsonl"
    dataset.unlink()
    os.mkfifo(dataset)

    run = run_cli(world.workspace, "validate", "datasets")

    assert run.returncode == 2, run.log
    assert "keyword.jsonl: is a FIFO (named pipe), not a regular file" in run.stderr


def test_a_dataset_symlinked_out_of_the_repository_is_refused(world: World, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere.jsonl"
    dataset = world.workspace / "datasets" / "keyword.jsonl"
    elsewhere.write_bytes(dataset.read_bytes())
    dataset.unlink()
    dataset.symlink_to(elsewhere)

    run = run_cli(world.workspace, "run")

    assert run.returncode == 2, run.log
    assert f"datasets/keyword.jsonl: resolves to {elsewhere}, outside the repository" in run.stderr


# A command retriever that keeps the documents it is asked to index.
KEEP_DOCUMENTS = """\
import json, sys
for line in sys.stdin:
    request = json.loads(line)
    if request["op"] == "index":
        with open(sys.argv[1], "w") as handle:
            json.dump(request["documents"], handle)
        print(json.dumps({"ok": True}), flush=True)
    else:
        print(json.dumps({"hits": []}), flush=True)
"""


@pytest.mark.parametrize("mode", ["evaluate-shard", "embed-shard"])
def test_a_matrix_shard_refuses_a_note_symlinked_out_of_the_repository(
    world: World, mode: str
) -> None:
    """Each job of the matrix reads the corpus too; `/proc/self/environ` holds the token,
    which the index request would hand to the retriever, the pull request's code."""
    dump = world.runs / "documents.json"
    world.runs.mkdir(parents=True, exist_ok=True)
    config = (world.workspace / "retrieval-eval.toml").read_text(encoding="utf-8") + (
        '\n[dataset_retrievers]\n"keyword.jsonl" = "custom"\n\n[retrievers.custom]\n'
        f'command = ["{sys.executable}", "keep.py", "{dump}"]\n'
    )
    base = world.commit({"keep.py": KEEP_DOCUMENTS, "retrieval-eval.toml": config}, "mine")
    _note(world).symlink_to("/proc/self/environ")
    head = commit_all(world.workspace, "a note that is a symlink")

    run = world.pull_request(8, base, head, mode=mode, shard="1/1")

    assert run.returncode == 2, run.log
    assert "resolves to /proc/" in run.log and "outside the repository" in run.log
    assert not dump.exists() or TOKEN not in dump.read_text(encoding="utf-8")
