"""Threat: the Python factory named in the config misbehaves, or cannot be found.

``python = "module:factory"`` is imported from the repository, as
docs/retrievers.md documents, under the console script the container runs
(whose ``sys.path`` does not hold the working directory). A factory or retriever
call that hangs ends at ``timeout_s``; one that calls ``sys.exit`` is an error.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.security.entry import TOKEN, World, run_cli, world_in


@pytest.fixture
def world(tmp_path: Path) -> Iterator[World]:
    yield from world_in(tmp_path)


# The documented example, with a ranking that finds the fixtures' notes.
MODULE = """\
from retrieval_eval.retrieval.base import Hit, SearchResult

class MySearch:
    name = "my-search"
    def __init__(self, index_name: str):
        self.index_name = index_name
        self.docs = []
    def index(self, corpus):
        self.docs = [(d.id, set(d.text.lower().split())) for d in corpus.documents]
    def search(self, query, k, tags=()):
        words = set(query.lower().split())
        ranked = sorted(self.docs, key=lambda d: (-len(words & d[1]), d[0]))[:k]
        return SearchResult(hits=tuple(Hit(i, float(len(words & w)), "") for i, w in ranked))
    def describe(self):
        return {"index_name": self.index_name}

def make_retriever(index_name: str) -> MySearch:
    BODY
    return MySearch(index_name)
"""


def _use_factory(world: World, body: str = "pass", *, timeout_s: float = 30.0) -> None:
    config = (world.workspace / "retrieval-eval.toml").read_text(encoding="utf-8")
    config += (
        '\n[dataset_retrievers]\n"keyword.jsonl" = "custom"\n\n[retrievers.custom]\n'
        'python = "my_search:make_retriever"\noptions = { index_name = "notes-v2" }\n'
        f"timeout_s = {timeout_s}\n"
    )
    world.commit(
        {"my_search.py": MODULE.replace("BODY", body), "retrieval-eval.toml": config}, "factory"
    )


def test_the_documented_factory_in_the_repository_imports_under_the_console_script(
    world: World,
) -> None:
    _use_factory(world)

    run = run_cli(world.workspace, "run")

    assert run.returncode == 0, run.log
    assert "No module named" not in run.log
    report = (world.workspace / "retrieval-eval-report" / "report.json").read_text()
    assert '"index_name": "notes-v2"' in report


def test_the_documented_factory_imports_in_the_action_too(world: World) -> None:
    _use_factory(world)

    run = world.push(world.head())

    assert run.returncode == 0, run.log
    assert run.outputs["verdict"] == "baseline-established"


def test_a_factory_that_hangs_is_stopped_at_timeout_s(world: World) -> None:
    _use_factory(world, "import time; time.sleep(3600)", timeout_s=1.0)

    run = run_cli(world.workspace, "run")

    assert run.returncode == 2, run.log
    assert "the factory did not return within 1 s" in run.stderr


def test_a_retriever_whose_search_hangs_is_stopped_at_timeout_s(world: World) -> None:
    _use_factory(
        world, "MySearch.search = lambda *a, **k: __import__('time').sleep(3600)", timeout_s=1.0
    )

    run = run_cli(world.workspace, "run")

    assert run.returncode == 2, run.log
    assert "search() did not return within 1 s" in run.stderr


def test_a_factory_calling_sys_exit_is_an_error_on_the_command_line(world: World) -> None:
    _use_factory(world, "import sys; sys.exit(0)")

    run = run_cli(world.workspace, "run")

    assert run.returncode == 2, run.log
    assert "the factory called sys.exit(0)" in run.stderr


# A factory that looks for the token everywhere its own process could hold it.
SPY = """\
import os
import pathlib

from retrieval_eval.retrieval.base import SearchResult

class Spy:
    name = "spy"
    def index(self, corpus):
        pass
    def search(self, query, k, tags=()):
        return SearchResult(hits=())
    def describe(self):
        return {}

def make():
    seen = [repr(dict(os.environ)), pathlib.Path("/proc/self/environ").read_text(errors="replace")]
    pathlib.Path(OUT).write_text("\\n".join(seen))
    return Spy()
"""


def test_a_factory_runs_where_the_token_is_not(world: World, tmp_path: Path) -> None:
    seen = tmp_path / "seen.txt"
    config = (world.workspace / "retrieval-eval.toml").read_text(encoding="utf-8")
    config += '\n[dataset_retrievers]\n"keyword.jsonl" = "custom"\n\n'
    config += '[retrievers.custom]\npython = "spy:make"\n'
    sha = world.commit(
        {"spy.py": SPY.replace("OUT", repr(str(seen))), "retrieval-eval.toml": config}, "spy"
    )

    run = world.push(sha)

    assert run.returncode == 0, run.log
    found = seen.read_text()
    assert TOKEN not in found
    assert "'GITHUB_TOKEN'" not in found and "GITHUB_TOKEN=" not in found
    assert "INPUT_GITHUB-TOKEN" not in found
