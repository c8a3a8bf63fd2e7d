"""Peak memory and time of `retrieval-eval validate` on very large dataset files.

Run by hand (it writes a few GB of scratch files):

    .venv/bin/python bench/bench_validate.py --size-mb 1024 --runs 3 --workdir /tmp/bench-validate

Cases, each measured in a fresh process (peak RSS from getrusage of the child):
- a ~1 GB dataset of valid fixtures (~10 KB each), validated by the streaming validator,
  against the naive peer: read the whole file, split lines, validate each line with pydantic;
- the same size with no newline at all (one runaway line), which must be reported, not loaded;
- one 10 MB line among ordinary fixtures.
Prints medians and the validator/peer ratios.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

PEER = """
import sys
from pathlib import Path
from retrieval_eval.load.fixtures import Fixture
count = 0
for text in Path(sys.argv[1]).read_text(encoding="utf-8").splitlines():
    if text.strip():
        Fixture.model_validate_json(text)
        count += 1
print(count)
"""


def fixture_line(number: int, context_bytes: int) -> bytes:
    record = {
        "query_id": f"q-{number:08d}",
        "query": f"question number {number}",
        "retrieval_type": "semantic",
        "expected_top_k_ids": [f"doc-{number % 1000}"],
        "ground_truth_source": "human-annotated",
        "answer_context": "x" * context_bytes,
    }
    return json.dumps(record).encode() + b"\n"


def write_large_dataset(path: Path, size: int, context_bytes: int) -> int:
    count = 0
    with path.open("wb") as handle:
        while handle.tell() < size:
            count += 1
            handle.write(fixture_line(count, context_bytes))
    return count


def write_runaway_line(path: Path, size: int) -> None:
    with path.open("wb") as handle:
        chunk = b"y" * (1024 * 1024)
        for _ in range(size // len(chunk)):
            handle.write(chunk)


def write_ten_mb_line(path: Path) -> None:
    with path.open("wb") as handle:
        for number in range(1, 21):
            handle.write(fixture_line(number, 10 * 1024 * 1024 if number == 10 else 100))


def isolated(command: list[str]) -> tuple[float, float, str]:
    # A wrapper process per measurement so RUSAGE_CHILDREN starts at zero every time.
    wrapper = (
        "import resource, subprocess, sys, time, json\n"
        "start = time.perf_counter()\n"
        "done = subprocess.run(sys.argv[1:], capture_output=True, text=True)\n"
        "seconds = time.perf_counter() - start\n"
        "peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024\n"
        "lines = (done.stderr.strip().splitlines() or done.stdout.strip().splitlines() or [''])\n"
        "print(json.dumps([seconds, peak, f'exit {done.returncode}: ' + lines[-1][:100]]))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", wrapper, *command], capture_output=True, text=True, check=True
    )
    seconds, peak, summary = json.loads(out.stdout)
    return float(seconds), float(peak), str(summary)


def run_case(name: str, command: list[str], runs: int) -> tuple[float, float]:
    results = [isolated(command) for _ in range(runs)]
    seconds = statistics.median(r[0] for r in results)
    peak = statistics.median(r[1] for r in results)
    print(f"{name}: median {seconds:.1f} s, peak RSS {peak:.0f} MiB ({results[-1][2]})")
    return seconds, peak


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--size-mb", type=int, default=1024)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--workdir", type=Path, required=True)
    args = parser.parse_args()
    args.workdir.mkdir(parents=True, exist_ok=True)
    size = args.size_mb * 1024 * 1024
    cli = [str(Path(sys.executable).with_name("retrieval-eval")), "validate", "--min-human", "0"]

    large = args.workdir / "large" / "semantic.jsonl"
    large.parent.mkdir(exist_ok=True)
    count = write_large_dataset(large, size, context_bytes=10_000)
    print(f"{large}: {large.stat().st_size / 2**20:.0f} MiB, {count:,} fixtures")
    ours = run_case("validate (streaming)", [*cli, str(large)], args.runs)
    peer = run_case(
        "peer: read_text + splitlines", [sys.executable, "-c", PEER, str(large)], args.runs
    )
    print(
        f"ratio validate/peer: time {ours[0] / peer[0]:.2f}x, peak memory {ours[1] / peer[1]:.3f}x"
    )
    large.unlink()

    runaway = args.workdir / "runaway" / "semantic.jsonl"
    runaway.parent.mkdir(exist_ok=True)
    write_runaway_line(runaway, size)
    run_case("validate, one line without newline", [*cli, str(runaway)], args.runs)
    runaway.unlink()

    ten = args.workdir / "ten" / "semantic.jsonl"
    ten.parent.mkdir(exist_ok=True)
    write_ten_mb_line(ten)
    run_case("validate, one 10 MB line", [*cli, str(ten)], args.runs)


if __name__ == "__main__":
    main()
