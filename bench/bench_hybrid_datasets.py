"""Our own hybrid.jsonl under each fusion, through `retrieval-eval run` as a user runs it.

Each system is one `retrieval-eval run` in a fresh process with a temporary
config (the repository's, plus one table) and a throw-away baseline, reading
MRR@10, NDCG@10 and the paraphrase MRR@10 of hybrid.jsonl from report.json.
Nothing here chose the defaults: they come from cross-validation on Cranfield
(docs/retrievers.md); this file only reports them.

    .venv/bin/python bench/bench_hybrid_datasets.py [--cache-dir DIR]
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CLI = Path(sys.executable).parent / "retrieval-eval"

SYSTEMS: dict[str, str] = {
    "dense alone": '[dataset_retrievers]\n"hybrid.jsonl" = "dense"\n',
    "bm25 alone": '[dataset_retrievers]\n"hybrid.jsonl" = "bm25"\n',
    "hybrid default (convex, theoretical-min, alpha 0.95)": "",
    "hybrid, CV argmax (convex, theoretical-min, alpha 0.85)": (
        '[retrievers.hybrid]\nfusion = "convex"\nalpha = 0.85\n'
    ),
    "hybrid, previous default (rrf, k 60, equal weights)": (
        '[retrievers.hybrid]\nfusion = "rrf"\nrrf_k = 60\n'
    ),
    "hybrid, dbsf (dense 1.5)": '[retrievers.hybrid]\nfusion = "dbsf"\nweights = { dense = 1.5 }\n',
}


def measure(table: str, cache_dir: Path, work: Path) -> dict[str, float]:
    config = work / "retrieval-eval.toml"
    text = (REPO / "retrieval-eval.toml").read_text()
    text = text.replace('datasets = "datasets"', f'datasets = "{REPO / "datasets"}"')
    text = text.replace('corpus = "datasets/corpus"', f'corpus = "{REPO / "datasets" / "corpus"}"')
    config.write_text(text + "\n" + table)
    report = work / "report"
    done = subprocess.run(
        [
            str(CLI),
            "run",
            "--config",
            str(config),
            "--baseline",
            str(work / "baseline.json"),
            "--report-dir",
            str(report),
            "--cache-dir",
            str(cache_dir),
            "--no-progress",
            "--quiet",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode not in (0, 1):
        raise SystemExit(done.stderr)
    data = json.loads((report / "report.json").read_text())
    dataset = next(d for d in data["datasets"] if d["name"] == "hybrid.jsonl")
    paraphrase = next(
        b
        for b in dataset["breakdowns"]
        if b["dimension"] == "query_type" and b["group"] == "paraphrase"
    )
    return {
        "mrr@10": dataset["aggregates"]["mrr@10"]["value"],
        "ndcg@10": dataset["aggregates"]["ndcg@10"]["value"],
        "paraphrase mrr@10": paraphrase["metrics"]["mrr@10"],
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cache-dir", type=Path, default=REPO / ".retrieval-eval-cache")
    args = parser.parse_args()
    print("| system | MRR@10 | NDCG@10 | paraphrase MRR@10 |")
    print("|---|---|---|---|")
    for name, table in SYSTEMS.items():
        work = Path(tempfile.mkdtemp(prefix="bench-hybrid-"))
        try:
            row = measure(table, args.cache_dir, work)
        finally:
            shutil.rmtree(work)
        cells = [f"{row[key]:.3f}" for key in ("mrr@10", "ndcg@10", "paraphrase mrr@10")]
        print(f"| {name} | {' | '.join(cells)} |")


if __name__ == "__main__":
    main()
