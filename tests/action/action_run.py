"""Run ``retrieval-eval action`` as the runner does: a subprocess with the runner's environment."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.action.runner_env import read_outputs, runner_env


@dataclass(frozen=True)
class ActionRun:
    returncode: int
    stdout: str
    stderr: str
    outputs: dict[str, str]
    summary: str

    @property
    def log(self) -> str:
        return self.stdout + self.stderr


def run_action(
    workspace: Path,
    run_dir: Path,
    *,
    event_name: str,
    payload: dict[str, Any],
    api_url: str,
    sha: str,
    extra_env: dict[str, str] | None = None,
    **inputs: str,
) -> ActionRun:
    """``run_dir`` (outside the workspace) holds the event file, GITHUB_OUTPUT and the summary."""
    run_dir.mkdir(parents=True, exist_ok=True)
    event_path = run_dir / "event.json"
    event_path.write_text(json.dumps(payload), encoding="utf-8")
    env = runner_env(
        workspace, event_name=event_name, event_path=event_path, api_url=api_url, sha=sha, **inputs
    )
    env["GITHUB_OUTPUT"] = str(run_dir / "github_output")
    env["GITHUB_STEP_SUMMARY"] = str(run_dir / "step_summary.md")
    # Only what a container has: no developer variables leak in.
    env["PATH"] = os.environ.get("PATH", "/usr/bin:/bin")
    env["HOME"] = str(run_dir)  # the runner gives a container action a fresh HOME
    env["LANG"] = "C.UTF-8"
    env.update(extra_env or {})
    completed = subprocess.run(
        [str(Path(sys.executable).with_name("retrieval-eval")), "action"],
        cwd=workspace,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    summary_path = run_dir / "step_summary.md"
    return ActionRun(
        returncode=completed.returncode,
        stdout=completed.stdout,
        stderr=completed.stderr,
        outputs=read_outputs(run_dir / "github_output"),
        summary=summary_path.read_text(encoding="utf-8") if summary_path.exists() else "",
    )
