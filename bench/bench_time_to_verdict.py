"""Time to verdict: a pull request's `retrieval-eval run` cold, warm, and with one document
changed, on BEIR collections imported as golden sets.

For each collection folder given (a BEIR layout: corpus.jsonl, queries.jsonl, qrels/), the
script imports it with `retrieval-eval import beir` into a scratch project (its documents
and one `hybrid.jsonl` of every judged query, the hybrid retriever with every default,
`model = "auto"` included), then times three fresh `retrieval-eval run` processes, as three
CI runs would be:

- **cold**: no embedding cache (every pull request today without `actions/cache`): the run
  embeds every chunk and every query and establishes the baseline;
- **warm**: the cache the cold run left (a pull request that changes no document);
- **one document changed**: one document's text edited (a sentence appended to the shortest
  document, so it stays one chunk), the cache of the warm run.

Each step reports wall and CPU seconds (user + system of the child), the texts the model
embedded and those the cache served (the report's counters), and the load average around it.
The one-document run must embed exactly one text, the changed document's chunk: the script
fails otherwise.

    .venv/bin/python bench/bench_time_to_verdict.py DATASETS/cranfield/beir DATASETS/vaswani/beir

``--scratch DIR`` keeps the projects (default: a temporary folder, removed afterwards).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

CONSOLE_SCRIPT = str(Path(sys.executable).with_name("retrieval-eval"))
CONFIG = """\
corpus = "datasets/documents.jsonl"
datasets = "datasets"
min_human = 1

[thresholds]
"ndcg@10" = false
"mrr@10" = false
"latency_p95_ms" = false
"""
APPENDED = " The flow was measured again at a higher Reynolds number."


@dataclass(frozen=True)
class Step:
    name: str
    wall_s: float
    cpu_s: float
    embedded: int | None
    cached: int | None
    load_before: float
    load_after: float
    estimate_line: str | None


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _cli(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(Path.home()), "CI": "1"}
    return subprocess.run(
        [CONSOLE_SCRIPT, *args], cwd=project, capture_output=True, text=True, env=env, check=False
    )


def _run(project: Path, name: str) -> Step:
    load_before = os.getloadavg()[0]
    cpu_before = _children_cpu()
    started = time.perf_counter()
    done = _cli(project, "run", "--cache-dir", "cache")
    wall = time.perf_counter() - started
    cpu = _children_cpu() - cpu_before
    load_after = os.getloadavg()[0]
    if done.returncode not in (0, 1):
        raise SystemExit(f"{name}: run exited {done.returncode}:\n{done.stderr}")
    report = json.loads((project / "retrieval-eval-report" / "report.json").read_text())
    [dataset] = report["datasets"]
    lines = done.stderr.splitlines()
    estimate = next((line for line in lines if ": embedding " in line), None)
    # The step's summary line, "indexing for dense: 11429 documents in 14.60 s".
    took = next(
        (
            line
            for line in lines
            if line.startswith("indexing for dense: ") and " documents in " in line
        ),
        None,
    )
    if estimate is not None and took is not None:
        estimate = f"{estimate} (then: {took.split(': ', 1)[1]})"
    return Step(
        name,
        wall,
        cpu,
        dataset.get("embedded_texts"),
        dataset.get("cached_embeddings"),
        load_before,
        load_after,
        estimate,
    )


def _change_one_document(project: Path) -> str:
    """Append a sentence to the shortest document with text; its id."""
    path = project / "datasets" / "documents.jsonl"
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    written = [i for i, record in enumerate(records) if record["text"].strip()]
    shortest = min(written, key=lambda i: len(records[i]["text"]))
    records[shortest]["text"] += APPENDED
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return str(records[shortest]["id"])


def measure(collection: Path, scratch: Path) -> list[Step]:
    name = collection.name if collection.name != "beir" else collection.parent.name
    project = scratch / name
    shutil.rmtree(project, ignore_errors=True)
    project.mkdir(parents=True)
    (project / "retrieval-eval.toml").write_text(CONFIG, encoding="utf-8")
    imported = _cli(project, "import", "beir", str(collection.resolve()), "--out", "datasets")
    if imported.returncode != 0:
        raise SystemExit(f"import failed:\n{imported.stderr}")
    steps = [_run(project, "cold"), _run(project, "warm")]
    changed = _change_one_document(project)
    steps.append(_run(project, f"one document changed ({changed})"))
    last = steps[-1]
    if last.embedded != 1:
        raise SystemExit(
            f"{name}: the changed document's run embedded {last.embedded} texts, not 1"
        )
    if steps[1].embedded != 0:
        raise SystemExit(f"{name}: the warm run embedded {steps[1].embedded} texts, not 0")
    return steps


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("collections", nargs="+", type=Path, help="BEIR folders")
    parser.add_argument("--scratch", type=Path, help="keep the projects here")
    args = parser.parse_args()
    scratch = args.scratch or Path(tempfile.mkdtemp(prefix="time-to-verdict-"))
    print(f"cores available: {len(os.sched_getaffinity(0))}, machine cores: {os.cpu_count()}")
    print("| collection | run | wall s | CPU s | texts embedded | from the cache | load 1 min |")
    print("|---|---|--:|--:|--:|--:|---|")
    estimates = []
    try:
        for collection in args.collections:
            steps = measure(collection, scratch)
            label = collection.name if collection.name != "beir" else collection.parent.name
            for step in steps:
                print(
                    f"| {label} | {step.name} | {step.wall_s:.1f} | {step.cpu_s:.1f} | "
                    f"{step.embedded} | {step.cached} | "
                    f"{step.load_before:.1f} → {step.load_after:.1f} |",
                    flush=True,
                )
                if step.estimate_line:
                    estimates.append(f"{label}, {step.name}: {step.estimate_line.strip()}")
    finally:
        if args.scratch is None:
            shutil.rmtree(scratch, ignore_errors=True)
    print("\nthe estimate lines:")
    for line in estimates:
        print(f"- {line}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
