"""The two entry points a user hits, as subprocesses: ``retrieval-eval CMD`` and
``retrieval-eval action`` under the runner's environment contract.

Both run the installed console script (never ``python -m``), so what is tested
is what the container's ENTRYPOINT runs: ``sys.path`` and signal handling included.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.action.git_repo import commit_all, git, write
from tests.action.payloads import pull_request_event, push_event
from tests.action.project import new_project
from tests.action.runner_env import TOKEN, read_outputs, runner_env
from tests.support.fake_github import FakeGitHub

CONSOLE_SCRIPT = str(Path(sys.executable).with_name("retrieval-eval"))
# A safety net only: every scenario here must end by itself far sooner.
HANG_LIMIT_S = 300


@dataclass(frozen=True)
class Run:
    returncode: int
    stdout: str
    stderr: str

    @property
    def log(self) -> str:
        return self.stdout + self.stderr


def run_cli(
    cwd: Path,
    *args: str,
    env: dict[str, str] | None = None,
    preexec_fn: Callable[[], None] | None = None,
) -> Run:
    """``retrieval-eval ARGS`` in ``cwd``, with a clean environment plus ``env``."""
    full_env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": os.environ.get("HOME", "/root"),
        "LANG": "C.UTF-8",
        "PYTHONDONTWRITEBYTECODE": "1",  # a run under a file-size limit must not cache .pyc
        **(env or {}),
    }
    with subprocess.Popen(
        [CONSOLE_SCRIPT, *args],
        cwd=cwd,
        env=full_env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        errors="replace",
        process_group=0,  # so a hung run can be stopped with all it started
        preexec_fn=preexec_fn,  # only resource limits, set before exec
    ) as process:
        try:
            stdout, stderr = process.communicate(timeout=HANG_LIMIT_S)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.communicate()
            raise
    return Run(process.returncode, stdout, stderr)


@dataclass(frozen=True)
class ActionRun(Run):
    outputs: dict[str, str]
    summary: str
    outputs_raw: str


@dataclass
class World:
    """A git workspace with the small notes project, a runs folder and the fake GitHub."""

    workspace: Path
    runs: Path
    github: FakeGitHub
    count: int = 0

    def commit(self, files: dict[str, str], message: str = "change") -> str:
        write(self.workspace, files)
        return commit_all(self.workspace, message)

    def head(self) -> str:
        return git(self.workspace, "rev-parse", "HEAD")

    def action(
        self,
        event_name: str,
        payload: dict[str, Any],
        *,
        sha: str,
        extra_env: dict[str, str] | None = None,
        preexec_fn: Callable[[], None] | None = None,
        **inputs: str,
    ) -> ActionRun:
        self.count += 1
        run_dir = self.runs / f"run{self.count}"
        run_dir.mkdir(parents=True, exist_ok=True)
        event_path = run_dir / "event.json"
        event_path.write_text(json.dumps(payload), encoding="utf-8")
        inputs.setdefault("github_retry_seconds", "2")
        env = runner_env(
            self.workspace,
            event_name=event_name,
            event_path=event_path,
            api_url=self.github.base_url,
            sha=sha,
            **inputs,
        )
        env["GITHUB_OUTPUT"] = str(run_dir / "github_output")
        env["GITHUB_STEP_SUMMARY"] = str(run_dir / "step_summary.md")
        env["HOME"] = str(run_dir)
        env.update(extra_env or {})
        run = run_cli(self.workspace, "action", env=env, preexec_fn=preexec_fn)
        output_file = run_dir / "github_output"
        summary = run_dir / "step_summary.md"
        return ActionRun(
            run.returncode,
            run.stdout,
            run.stderr,
            outputs=read_outputs(output_file),
            summary=summary.read_text(encoding="utf-8") if summary.exists() else "",
            outputs_raw=output_file.read_text(encoding="utf-8") if output_file.exists() else "",
        )

    def pull_request(self, number: int, base: str, head: str, **kwargs: Any) -> ActionRun:
        files = git(self.workspace, "diff", "--name-only", f"{base}...{head}").splitlines()
        self.github.add_pull(number, head_sha=head, base_sha=base, files=files)
        payload = pull_request_event(
            number=number, head_sha=head, base_sha=base, changed_files=len(files)
        )
        git(self.workspace, "checkout", "-q", head)
        return self.action("pull_request", payload, sha="e" * 40, **kwargs)

    def push(self, sha: str, **kwargs: Any) -> ActionRun:
        git(self.workspace, "checkout", "-q", sha)
        return self.action("push", push_event(sha), sha=sha, **kwargs)


def new_world(tmp_path: Path, github: FakeGitHub) -> World:
    workspace = tmp_path / "workspace"
    new_project(workspace)
    return World(workspace=workspace, runs=tmp_path / "runs", github=github)


__all__ = ["TOKEN", "World", "new_world", "run_cli", "world_in"]


def world_in(tmp_path: Path) -> Iterator[World]:
    """For each test module's ``world`` fixture: ``yield from world_in(tmp_path)``."""
    with FakeGitHub(token=TOKEN, repository="octo/notes") as github:
        yield new_world(tmp_path, github)
