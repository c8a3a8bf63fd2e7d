"""The whole `retrieval-eval run` on datasets/, cold and warm (embedding cache).

Each measurement is a fresh process, as in CI: interpreter start, imports,
model load, indexing every retriever, searching every fixture, metrics,
gate, report. "Cold" starts from an empty embedding cache, "warm" from the
cache the previous run left. The repository's baseline.json is copied to a
temporary folder, so the gate does its real work and the repository is not
touched. Peers measured in the same run: `retrieval-eval --version` (the
process floor) and `retrieval-eval validate` (reading and checking the data).
Each step is reported as wall time and as CPU time (user + system of the child,
which a shared, loaded machine distorts less).

    .venv/bin/python bench/bench_run.py --repeat 5
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CLI = [sys.executable, "-m", "retrieval_eval"]


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(args: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one child process."""
    cpu_before = _children_cpu()
    started = time.perf_counter()
    completed = subprocess.run(args, cwd=REPO, capture_output=True, text=True, check=False, env=env)
    elapsed = time.perf_counter() - started
    cpu = _children_cpu() - cpu_before
    if completed.returncode != 0:
        raise SystemExit(f"{' '.join(args)} exited {completed.returncode}:\n{completed.stderr}")
    return elapsed, cpu


def run_args(scratch: Path, cache: Path) -> list[str]:
    return [
        *CLI,
        "run",
        "--quiet",
        "--no-progress",
        "--baseline",
        str(scratch / "baseline.json"),
        "--report-dir",
        str(scratch / "report"),
        "--cache-dir",
        str(cache),
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    options = parser.parse_args()

    cold: list[tuple[float, float]] = []
    warm: list[tuple[float, float]] = []
    floor: list[tuple[float, float]] = []
    validate: list[tuple[float, float]] = []
    # Inside the repository (in the ignored cache folder): `run` keeps the history file
    # beside the baseline and refuses a history outside the repository.
    ignored = REPO / ".retrieval-eval-cache"
    ignored.mkdir(exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="bench-run-", dir=ignored) as folder:
        scratch = Path(folder)
        # Installed packages normally carry compiled bytecode (pip compiles at install,
        # the Docker image too); a private pycache gives the same without touching .venv.
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env["PYTHONPYCACHEPREFIX"] = str(scratch / "pycache")
        env["CI"] = "true"
        shutil.copy(REPO / "baseline.json", scratch / "baseline.json")
        timed(run_args(scratch, scratch / "cache-warm-up"), env)  # fills the pycache
        for attempt in range(options.repeat):
            shutil.copy(REPO / "baseline.json", scratch / "baseline.json")
            cache = scratch / f"cache-{attempt}"
            floor.append(timed([*CLI, "--version"], env))
            validate.append(
                timed([*CLI, "validate", "datasets", "--corpus", "datasets/corpus"], env)
            )
            cold.append(timed(run_args(scratch, cache), env))
            warm.append(timed(run_args(scratch, cache), env))

    def show(name: str, values: list[tuple[float, float]]) -> None:
        walls = [wall for wall, _ in values]
        cpus = [cpu for _, cpu in values]
        median = statistics.median(walls)
        ratio = median / statistics.median(wall for wall, _ in cold)
        runs = ", ".join(f"{v:.2f}" for v in cpus)
        print(
            f"| {name} | {median:.2f} s | {ratio:.2f}× | {statistics.median(cpus):.2f} s | {runs} |"
        )

    print(f"median of {options.repeat} runs; ratio = wall time / cold run's wall time")
    print("| step | wall, median | vs cold run | CPU, median | CPU runs (s) |")
    print("|---|--:|--:|--:|---|")
    show("`retrieval-eval --version` (process floor)", floor)
    show("`retrieval-eval validate datasets --corpus datasets/corpus`", validate)
    show("`retrieval-eval run`, cold (empty embedding cache)", cold)
    show("`retrieval-eval run`, warm (embedding cache filled)", warm)
    return 0


if __name__ == "__main__":
    sys.exit(main())
