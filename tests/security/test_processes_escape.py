"""Threat: a retriever's setsid double fork outlives the run and rewrites report and baseline.

The escaped process holds a FIFO open and waits for a byte on it before it writes;
the run must have ended it by the time ``retrieval-eval run`` exits. Whether it is
alive is read from the FIFO itself: opening a FIFO for writing without blocking
fails with ENXIO exactly when no process holds it open for reading.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import signal
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.security.entry import World, run_cli, world_in


@pytest.fixture
def world(tmp_path: Path) -> Iterator[World]:
    yield from world_in(tmp_path)


# Returns once the escaped process holds the FIFO, so the run cannot end before it does.
ESCAPE = """\
import os, sys

def escape(go, done, pid_file, targets):
    ready_read, ready_write = os.pipe()
    if os.fork() == 0:
        os.setsid()  # a session and process group of its own: out of reach of a group kill
        if os.fork() == 0:
            os.close(ready_read)
            null = os.open(os.devnull, os.O_RDWR)
            for fd in (0, 1, 2):
                os.dup2(null, fd)  # a daemon's habit: it holds none of the run's pipes
            signal_fd = os.open(go, os.O_RDWR)
            with open(pid_file, "w") as handle:
                handle.write(str(os.getpid()))
            os.write(ready_write, b"ready")
            os.close(ready_write)
            os.read(signal_fd, 1)
            for target in targets:
                with open(target, "w") as handle:
                    handle.write("rewritten after the run\\n")
            with open(done, "wb") as handle:
                handle.write(b"done")
            os._exit(0)
        os._exit(0)  # the middle process: its child is now an orphan
    os.close(ready_write)
    os.read(ready_read, 5)
    os.close(ready_read)
    os.wait()
"""

COMMAND = """\
import json, sys
from escape import escape
escape(*json.loads(sys.argv[1]))
docs = []
for line in sys.stdin:
    request = json.loads(line)
    if request["op"] == "index":
        docs = [d["id"] for d in request["documents"]]
        answer = {"ok": True}
    else:
        answer = {"hits": [{"id": d, "score": 1.0 / (i + 1)} for i, d in enumerate(docs)]}
    print(json.dumps(answer), flush=True)
"""

FACTORY = """\
import json
from escape import escape
from retrieval_eval.retrieval.base import Hit, SearchResult

class Everything:
    name = "everything"
    def index(self, corpus):
        self.docs = [d.id for d in corpus.documents]
    def search(self, query, k, tags=()):
        return SearchResult(hits=tuple(Hit(d, 1.0 / (i + 1), "") for i, d in enumerate(self.docs)))
    def describe(self):
        return {}

def make_retriever(plan):
    escape(*json.loads(plan))
    return Everything()
"""


def _use(world: World, kind: str, plan: str) -> None:
    config = (world.workspace / "retrieval-eval.toml").read_text(encoding="utf-8")
    config += '\n[dataset_retrievers]\n"keyword.jsonl" = "custom"\n\n[retrievers.custom]\n'
    files = {"escape.py": ESCAPE}
    if kind == "command":
        config += f"command = {json.dumps([sys.executable, 'search.py', plan])}\n"
        files["search.py"] = COMMAND
    else:
        config += 'python = "my_search:make_retriever"\n'
        config += f"options = {{ plan = {json.dumps(plan)} }}\n"
        files["my_search.py"] = FACTORY
    world.commit({**files, "retrieval-eval.toml": config}, "a retriever that escapes")


@pytest.mark.parametrize("kind", ["command", "factory"])
def test_a_double_forked_setsid_process_is_gone_when_the_run_ends(
    world: World, tmp_path: Path, kind: str
) -> None:
    go, done, pid_file = tmp_path / "go", tmp_path / "done", tmp_path / "escaped.pid"
    os.mkfifo(go)
    os.mkfifo(done)
    baseline = world.workspace / "baseline.json"
    report = world.workspace / "retrieval-eval-report" / "report.json"
    _use(world, kind, json.dumps([str(go), str(done), str(pid_file), [str(report), str(baseline)]]))

    run = run_cli(world.workspace, "run")

    assert run.returncode == 0, run.log
    assert pid_file.exists(), "the retriever never forked; the test proves nothing"
    written = {path: path.read_bytes() for path in (report, baseline)}
    try:
        signal_fd = os.open(go, os.O_WRONLY | os.O_NONBLOCK)
    except OSError as error:
        assert error.errno == errno.ENXIO, error
    else:
        # It is alive: let it do what it waited for, then show what it did.
        try:
            os.write(signal_fd, b"g")
            os.close(signal_fd)
            with open(done, "rb") as finished:
                finished.read()
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.kill(int(pid_file.read_text(encoding="utf-8")), signal.SIGKILL)
        pytest.fail(
            "the escaped process outlived the run; it rewrote: "
            + ", ".join(p.name for p, data in written.items() if p.read_bytes() != data)
        )
    assert {path: path.read_bytes() for path in (report, baseline)} == written
