"""Threat: outside the image, where no user of its own can be dropped to (a development
machine, a job step as root), the retriever reads the token from the Action's start-up
environment, finds the runner's temp folder in its own, or uses a descriptor it inherited.

The token is erased from the environment block ``/proc/<pid>/environ`` reads before any
child starts, so even a child running as root, which may read that file, finds no token;
RUNNER_TEMP is withheld, and the child holds its three pipes only. As root without the
boundary's user the run says so. tests/container/test_boundary.py shows the boundary itself.
"""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

import pytest

from retrieval_eval.trust.boundary import CHILD_USER
from tests.action.project import CONFIG
from tests.security.harness import Repo
from tests.support.runner_env import TOKEN

pytestmark = pytest.mark.slow

# Records what it can see of its parent and itself, then serves every document in order.
RETRIEVER = """\
import json, os, sys
def attempt(path):
    try:
        with open(path, "rb") as handle:
            return handle.read().decode("utf-8", "replace")
    except OSError as error:
        return "refused: " + type(error).__name__
fds = {}
for fd in os.listdir("/proc/self/fd"):
    try:
        fds[fd] = os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        pass
with open(sys.argv[1], "w") as out:
    json.dump({
        "parent_environ": attempt(f"/proc/{os.getppid()}/environ"),
        "runner_temp": os.environ.get("RUNNER_TEMP"),
        "fds": fds,
    }, out)
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


def pull_request_with_retriever(
    repo: Repo, dump: Path, runner_temp: Path
) -> tuple[dict[str, object], str]:
    main = repo.head()
    repo.branch("feature", main)
    custom = (
        '\n[dataset_retrievers]\n"keyword.jsonl" = "custom"\n\n[retrievers.custom]\n'
        f'command = [{json.dumps(sys.executable)}, "search.py", {json.dumps(str(dump))}]\n'
    )
    head = repo.commit({"retrieval-eval.toml": CONFIG + custom, "search.py": RETRIEVER}, "mine")
    run = repo.pull_request(60, main, head, extra_env={"RUNNER_TEMP": str(runner_temp)})
    assert run.outputs["verdict"] == "baseline-established", run.log
    return json.loads(dump.read_text(encoding="utf-8")), run.log


def test_the_child_finds_no_token_in_the_actions_startup_environment(
    repo: Repo, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """As root the child may read /proc/<parent>/environ (as an ordinary user it may not):
    either way the token is not there."""
    dump = tmp_path_factory.mktemp("dump") / "seen.json"
    seen, _ = pull_request_with_retriever(repo, dump, tmp_path_factory.mktemp("runner_temp"))

    environ = str(seen["parent_environ"])
    assert TOKEN not in environ
    if os.geteuid() == 0:
        # Read, not refused: the block is there, with the other variables and no secret.
        assert "GITHUB_REPOSITORY=octo/notes" in environ
        assert "INPUT_GITHUB-TOKEN=" not in environ and "GITHUB_OUTPUT=" not in environ
    else:
        assert environ == "refused: PermissionError"


def test_the_child_gets_no_runner_temp_and_no_descriptor_but_its_pipes(
    repo: Repo, tmp_path_factory: pytest.TempPathFactory
) -> None:
    dump = tmp_path_factory.mktemp("dump") / "seen.json"
    seen, log = pull_request_with_retriever(repo, dump, tmp_path_factory.mktemp("runner_temp"))

    assert seen["runner_temp"] is None
    fds = dict(seen["fds"])  # type: ignore[call-overload]
    assert all(fds[fd].startswith("pipe:") for fd in ("0", "1", "2")), fds
    extra = {fd: target for fd, target in fds.items() if fd not in {"0", "1", "2"}}
    assert all(re.fullmatch(r"/proc/\d+/fd", target) for target in extra.values()), extra
    if os.geteuid() == 0:
        # No user to drop to on this machine: the run says the code ran as root.
        assert f"no user `{CHILD_USER}`" in log
