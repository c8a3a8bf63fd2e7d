"""The whole `retrieval-eval run` on datasets/, cold and warm (embedding cache).

Each measurement is a fresh process, as in CI: interpreter start, imports,
model load, indexing every retriever, searching every fixture, metrics,
gate, report. "Cold" starts from an empty embedding cache, "warm" from the
cache the previous run left. The repository's baseline.json is copied to a
temporary folder, so the gate does its real work and the repository is not
touched. Peers measured in the same run: `retrieval-eval --version` (the
process floor) and `retrieval-eval validate` (reading and checking the data).
Each step is reported as wall time and as CPU time (user + system of the child,
which a shared, loaded machine distorts less). ``--other-src`` measures a second tree's
``src`` (another commit's, from ``git archive``) the same way, interleaved with this one
in every attempt, so a change in the machine's load falls on both.

    .venv/bin/python bench/bench_run.py --repeat 5
    .venv/bin/python bench/bench_run.py --repeat 5 --other-src /tmp/before/src
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
    parser.add_argument(
        "--other-src",
        type=Path,
        help="another tree's src folder, measured the same way, interleaved with this one",
    )
    options = parser.parse_args()
    trees = {"this tree": None}
    if options.other_src is not None:
        trees = {"other tree": options.other_src.resolve(), "this tree": None}

    steps = ("floor", "validate", "cold", "warm")
    measured = {tree: {step: [] for step in steps} for tree in trees}
    # Inside the repository (in the ignored cache folder): `run` keeps the history file
    # beside the baseline and refuses a history outside the repository.
    ignored = REPO / ".retrieval-eval-cache"
    ignored.mkdir(exist_ok=True)
    load_start = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="bench-run-", dir=ignored) as folder:
        scratch = Path(folder)
        envs: dict[str, dict[str, str]] = {}
        for number, (tree, src) in enumerate(trees.items()):
            # Installed packages normally carry compiled bytecode (pip compiles at install,
            # the Docker image too); a private pycache gives the same without touching .venv.
            env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
            env["PYTHONPYCACHEPREFIX"] = str(scratch / f"pycache-{number}")
            env["CI"] = "true"
            if src is not None:
                env["PYTHONPATH"] = str(src)
            envs[tree] = env
            shutil.copy(REPO / "baseline.json", scratch / "baseline.json")
            timed(run_args(scratch, scratch / f"cache-warm-up-{number}"), env)  # the pycache
        for attempt in range(options.repeat):
            for number, tree in enumerate(trees):
                env = envs[tree]
                shutil.copy(REPO / "baseline.json", scratch / "baseline.json")
                cache = scratch / f"cache-{number}-{attempt}"
                runs = measured[tree]
                runs["floor"].append(timed([*CLI, "--version"], env))
                runs["validate"].append(
                    timed([*CLI, "validate", "datasets", "--corpus", "datasets/corpus"], env)
                )
                runs["cold"].append(timed(run_args(scratch, cache), env))
                runs["warm"].append(timed(run_args(scratch, cache), env))
    load_end = os.getloadavg()[0]

    def show(name: str, values: list[tuple[float, float]], cold: list[tuple[float, float]]) -> None:
        walls = [wall for wall, _ in values]
        cpus = [cpu for _, cpu in values]
        median = statistics.median(walls)
        ratio = median / statistics.median(wall for wall, _ in cold)
        runs = ", ".join(f"{v:.2f}" for v in cpus)
        print(
            f"| {name} | {median:.2f} s | {ratio:.2f}× | {statistics.median(cpus):.2f} s | {runs} |"
        )

    print(f"median of {options.repeat} runs; ratio = wall time / cold run's wall time")
    print(f"load average {load_start:.1f} at the start, {load_end:.1f} at the end")
    print("| step | wall, median | vs cold run | CPU, median | CPU runs (s) |")
    print("|---|--:|--:|--:|---|")
    for tree, runs in measured.items():
        prefix = f"{tree}: " if len(trees) > 1 else ""
        cold = runs["cold"]
        show(f"{prefix}`retrieval-eval --version` (process floor)", runs["floor"], cold)
        show(
            f"{prefix}`retrieval-eval validate datasets --corpus datasets/corpus`",
            runs["validate"],
            cold,
        )
        show(f"{prefix}`retrieval-eval run`, cold (empty embedding cache)", cold, cold)
        show(f"{prefix}`retrieval-eval run`, warm (embedding cache filled)", runs["warm"], cold)
    return 0


if __name__ == "__main__":
    sys.exit(main())
