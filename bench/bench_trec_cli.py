"""`retrieval-eval trec` end to end against pytrec_eval, in CPU time and peak memory.

    .venv/bin/python bench/bench_trec_cli.py --data /tmp/trecbench --queries 100000 --pairs 3
    .venv/bin/python bench/bench_trec_cli.py --data /tmp/trecbench --no-peer \
        --other-src /tmp/main/src            # against another checkout's code

Files come from bench_metrics_data.py (N queries x 100 results, plus the same run's
lines shuffled), written to --data (keep it out of the repository). Each measurement
is a fresh process under `/usr/bin/time -f "%U %S %M"` (user + system CPU seconds,
peak RSS); ours (the console script, in order and shuffled) and pytrec_eval (parse +
evaluate the same five measures) take turns, so a change in the machine's load falls
on all of them. With --other-src (a `src/` folder, e.g. from `git archive main src`)
the console script also runs with that code first on PYTHONPATH, in turn with ours.
Every round checks that all of these print byte-identical output. Medians over
--pairs rounds, as JSON on stdout.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
MEASURES = ("ndcg_cut.10", "recip_rank", "P.5", "recall.100", "map")
PYTREC = f"""
import sys, pytrec_eval
with open(sys.argv[1]) as h: qrels = pytrec_eval.parse_qrel(h)
with open(sys.argv[2]) as h: run = pytrec_eval.parse_run(h)
pytrec_eval.RelevanceEvaluator(qrels, set({list(MEASURES)!r})).evaluate(run)
"""


def timed(command: list[str], env: dict[str, str] | None = None) -> tuple[float, float, str]:
    """(CPU seconds, peak MB, stdout) of one child."""
    done = subprocess.run(
        ["/usr/bin/time", "-f", "%U %S %M", *command],
        capture_output=True,
        text=True,
        check=True,
        env=env,
    )
    user, system, peak_kb = done.stderr.strip().splitlines()[-1].split()
    return float(user) + float(system), int(peak_kb) / 1024, done.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--queries", type=int, default=100_000)
    parser.add_argument("--pairs", type=int, default=3)
    parser.add_argument("--no-peer", action="store_true", help="ours only (1M: no peer)")
    parser.add_argument("--other-src", type=Path, help="a src/ folder to compare with ours")
    args = parser.parse_args()
    sys.path.insert(0, str(HERE))
    from bench_metrics_data import generate, shuffled

    qrels, run = generate(args.data, args.queries)
    scattered = shuffled(run)
    cli = str(Path(sys.executable).with_name("retrieval-eval"))
    flags = [part for m in MEASURES for part in ("-m", m)]
    ours = {
        "ours": [cli, "trec", *flags, str(qrels), str(run)],
        "ours-shuffled": [cli, "trec", *flags, str(qrels), str(scattered)],
    }
    kinds: dict[str, tuple[list[str], dict[str, str] | None]] = {}
    for kind, command in ours.items():
        kinds[kind] = (command, None)
        if args.other_src is not None:
            env = {**os.environ, "PYTHONPATH": str(args.other_src.resolve())}
            kinds[kind.replace("ours", "other")] = (command, env)
    if not args.no_peer:
        kinds["pytrec_eval"] = ([sys.executable, "-c", PYTREC, str(qrels), str(run)], None)
    samples: dict[str, list[tuple[float, float]]] = {kind: [] for kind in kinds}
    for _ in range(args.pairs):
        printed: dict[str, str] = {}
        for kind, (command, env) in kinds.items():
            cpu, peak, printed[kind] = timed(command, env)
            samples[kind].append((cpu, peak))
            print(kind, samples[kind][-1], f"load {os.getloadavg()[0]:.1f}", file=sys.stderr)
        for kind in kinds:  # one output for every line order and both codes
            if kind != "pytrec_eval" and printed[kind] != printed["ours"]:
                raise SystemExit(f"{kind}: output differs from ours on lines in order")
    medians = {
        kind: {
            "cpu_s": statistics.median(cpu for cpu, _ in got),
            "peak_mb": statistics.median(mb for _, mb in got),
        }
        for kind, got in samples.items()
    }
    print(json.dumps({"queries": args.queries, "pairs": args.pairs, **medians}, indent=2))


if __name__ == "__main__":
    main()
