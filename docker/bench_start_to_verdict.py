"""Start-to-verdict of the Action's image on this repository's datasets/, against its peer.

The peer is the same `retrieval-eval action` run on the host, in .venv, with the same
runner environment. Each run is cold: a fresh workspace, home and embedding cache. Runs
alternate between the two, so both see the same machine load. The script prints each run
and the medians, and reports the container as a ratio of the host.

    .venv/bin/python docker/bench_start_to_verdict.py IMAGE [RUNS]

It needs a running Docker engine and IMAGE built (scripts/ci-container.sh builds one). It
runs by hand and is not a test.
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))

from tests.action.payloads import workflow_dispatch_event  # noqa: E402
from tests.action.runner_env import runner_env  # noqa: E402
from tests.container.runner import run_container  # noqa: E402
from tests.container.test_runner_container import own_datasets_workspace  # noqa: E402

from retrieval_eval.index.model_install import default_model_dir  # noqa: E402

API_URL = "http://127.0.0.1:9/api/v3"  # nothing listens: publishing fails fast, as in the test


def host_run(workspace: Path, run_dir: Path, sha: str) -> float:
    run_dir.mkdir(parents=True)
    event = run_dir / "event.json"
    event.write_text("{}", encoding="utf-8")
    env = runner_env(
        workspace,
        event_name="workflow_dispatch",
        event_path=event,
        api_url=API_URL,
        sha=sha,
        github_retry_seconds="0",
    )
    env.update(
        {
            "PATH": os.environ["PATH"],
            "HOME": str(run_dir),
            "LANG": "C.UTF-8",
            "GITHUB_OUTPUT": str(run_dir / "output"),
            "GITHUB_STEP_SUMMARY": str(run_dir / "summary.md"),
            "RETRIEVAL_EVAL_MODEL_DIR": str(default_model_dir(Path.home())),
        }
    )
    started = time.monotonic()
    subprocess.run(
        [str(REPO_ROOT / ".venv" / "bin" / "retrieval-eval"), "action"],
        cwd=workspace,
        env=env,
        capture_output=True,
        check=False,
    )
    return time.monotonic() - started


def main() -> None:
    image = sys.argv[1]
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    container: list[float] = []
    host: list[float] = []
    for index in range(runs):
        with tempfile.TemporaryDirectory() as scratch:
            root = Path(scratch)
            sha = own_datasets_workspace(root / "c-ws")
            run = run_container(
                image,
                root / "c-ws",
                root / "c-run",
                event_name="workflow_dispatch",
                payload=workflow_dispatch_event(),
                api_url=API_URL,
                sha=sha,
                network="none",
                github_retry_seconds="0",
            )
            container.append(run.seconds)
            sha = own_datasets_workspace(root / "h-ws")
            host.append(host_run(root / "h-ws", root / "h-run", sha))
            shutil.rmtree(root / "c-ws", ignore_errors=True)  # root-owned files from the container
        print(
            f"run {index + 1}: container {container[-1]:.1f} s, host {host[-1]:.1f} s, "
            f"load {os.getloadavg()[0]:.1f}"
        )
    c, h = statistics.median(container), statistics.median(host)
    print(f"median: container {c:.1f} s, host {h:.1f} s, container/host {c / h:.2f}")


if __name__ == "__main__":
    main()
