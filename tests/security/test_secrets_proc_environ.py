"""Threat: the retriever reads the token from its parent's start-up environment.

Withholding a secret from ``os.environ`` leaves it in the environment block the
``retrieval-eval`` process started with, readable by a same-user child through
``/proc/<parent pid>/environ``, unless the product makes itself non-dumpable. That
protects a run as an ordinary user (a job step on a hosted runner). Root keeps
access on the kernels we could try, even without CAP_SYS_PTRACE, so the test needs
the suite to run as an ordinary user and is skipped under root.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.security.entry import World, run_cli, world_in

SECRET = "ghs_proc-environ-SECRET-0123456789"

RETRIEVER = """\
import json, os, sys
try:
    with open(f"/proc/{os.getppid()}/environ", "rb") as handle:
        seen = handle.read().decode("utf-8", "replace")
except OSError as error:
    seen = "refused: " + error.strerror
with open(sys.argv[1], "w") as out:
    json.dump({"parent": seen}, out)
docs = []
for line in sys.stdin:
    request = json.loads(line)
    if request["op"] == "index":
        docs = [d["id"] for d in request["documents"]]
        print(json.dumps({"ok": True}), flush=True)
    else:
        hits = [{"id": d, "score": 1.0 / (i + 1)} for i, d in enumerate(docs)]
        print(json.dumps({"hits": hits}), flush=True)
"""


@pytest.fixture
def world(tmp_path: Path) -> Iterator[World]:
    yield from world_in(tmp_path)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc is Linux's")
@pytest.mark.skipif(os.geteuid() == 0, reason="root reads any process's environ")
def test_a_retriever_cannot_read_the_token_from_its_parents_environment(world: World) -> None:
    dump = world.runs / "parent-environ.json"
    world.runs.mkdir(parents=True, exist_ok=True)
    config = (world.workspace / "retrieval-eval.toml").read_text(encoding="utf-8")
    config = config.replace(
        "min_human = 1\n",
        'min_human = 1\n\n[dataset_retrievers]\n"keyword.jsonl" = "custom"\n\n'
        "[retrievers.custom]\n"
        f'command = [{json.dumps(sys.executable)}, "search.py", {json.dumps(str(dump))}]\n',
    )
    world.commit({"search.py": RETRIEVER, "retrieval-eval.toml": config}, "my retriever")

    run = run_cli(world.workspace, "run", env={"GITHUB_TOKEN": SECRET})

    assert run.returncode == 0, run.log
    seen = json.loads(dump.read_text(encoding="utf-8"))["parent"]
    assert SECRET not in seen
    assert seen == "refused: Permission denied"
