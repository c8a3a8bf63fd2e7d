"""`retrieval-eval action` started as GitHub's runner starts it, for every test that does.

The runner's side of the contract is one environment (``runner_env``: every input as
``INPUT_*``, the job's context as ``GITHUB_*``, the file-command files and a fresh
``HOME``) and one entry point, the installed console script the container's ENTRYPOINT
runs (never ``python -m``), so ``sys.path`` and signal handling are the real ones.
``action_env`` builds that environment; ``run_action`` starts the console script under
it and reads back what the runner would (exit code, outputs, job summary). The container
tests hand the same environment to ``docker run``.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.support.runner_env import read_outputs, runner_env

CONSOLE_SCRIPT = str(Path(sys.executable).with_name("retrieval-eval"))
# A safety net only: every run a test starts must end by itself far sooner.
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


def action_env(
    workspace: Path,
    *,
    event_name: str,
    event_path: Path,
    api_url: str,
    sha: str,
    output: Path,
    summary: Path,
    home: Path,
    **inputs: str,
) -> dict[str, str]:
    """The runner's environment for one step: inputs at their defaults unless given, the
    event, the file-command files (``GITHUB_OUTPUT``, ``GITHUB_STEP_SUMMARY``) and ``HOME``."""
    env = runner_env(
        workspace, event_name=event_name, event_path=event_path, api_url=api_url, sha=sha, **inputs
    )
    env.update(GITHUB_OUTPUT=str(output), GITHUB_STEP_SUMMARY=str(summary), HOME=str(home))
    return env


@dataclass(frozen=True)
class ActionRun(Run):
    outputs: dict[str, str]
    summary: str
    outputs_raw: str


def run_action(
    workspace: Path,
    run_dir: Path,
    *,
    event_name: str,
    payload: dict[str, Any],
    api_url: str,
    sha: str,
    extra_env: dict[str, str] | None = None,
    preexec_fn: Callable[[], None] | None = None,
    **inputs: str,
) -> ActionRun:
    """One step of a workflow. ``run_dir`` (outside the workspace) holds the event file,
    ``GITHUB_OUTPUT``, the job summary and the step's fresh ``HOME``; ``extra_env`` is set
    last (e.g. a secret the workflow passes)."""
    run_dir.mkdir(parents=True, exist_ok=True)
    event_path = run_dir / "event.json"
    event_path.write_text(json.dumps(payload), encoding="utf-8")
    output, summary = run_dir / "github_output", run_dir / "step_summary.md"
    env = action_env(
        workspace,
        event_name=event_name,
        event_path=event_path,
        api_url=api_url,
        sha=sha,
        output=output,
        summary=summary,
        home=run_dir,
        **inputs,
    )
    env.update(extra_env or {})
    run = run_cli(workspace, "action", env=env, preexec_fn=preexec_fn)
    return ActionRun(
        run.returncode,
        run.stdout,
        run.stderr,
        outputs=read_outputs(output),
        summary=summary.read_text(encoding="utf-8") if summary.exists() else "",
        outputs_raw=output.read_text(encoding="utf-8") if output.exists() else "",
    )
