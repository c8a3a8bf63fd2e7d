"""Our own datasets/ under each system, through `retrieval-eval run` as a user runs it.

Each system is one `retrieval-eval run` in a fresh process with a temporary
config (the repository's, with every dataset file mapped to the system) and a
throw-away baseline, reading each file's MRR@10 and NDCG@10, and hybrid.jsonl's
paraphrase MRR@10, from report.json.
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

FILES = ("keyword.jsonl", "semantic.jsonl", "hybrid.jsonl")
# system name → (retriever every file is evaluated with, extra config table)
SYSTEMS: dict[str, tuple[str, str]] = {
    "dense alone": ("dense", ""),
    "bm25 alone": ("bm25", ""),
    "hybrid default (convex, theoretical, alpha 0.7)": ("hybrid", ""),
    "hybrid, theoretical-min alpha 0.85 (best theoretical-min on Cranfield)": (
        "hybrid",
        '[retrievers.hybrid]\nnormalisation = "theoretical-min"\nalpha = 0.85\n',
    ),
    "hybrid, theoretical-min alpha 0.95 (previous default)": (
        "hybrid",
        '[retrievers.hybrid]\nnormalisation = "theoretical-min"\nalpha = 0.95\n',
    ),
    "hybrid, rrf k 60, equal weights (the first default)": (
        "hybrid",
        '[retrievers.hybrid]\nfusion = "rrf"\nrrf_k = 60\n',
    ),
    "hybrid, dbsf (dense 1.5)": (
        "hybrid",
        '[retrievers.hybrid]\nfusion = "dbsf"\nweights = { dense = 1.5 }\n',
    ),
}


def measure(retriever: str, table: str, cache_dir: Path, work: Path) -> dict[str, float]:
    config = work / "retrieval-eval.toml"
    text = (REPO / "retrieval-eval.toml").read_text()
    text = text.replace('datasets = "datasets"', f'datasets = "{REPO / "datasets"}"')
    text = text.replace('corpus = "datasets/corpus"', f'corpus = "{REPO / "datasets" / "corpus"}"')
    mapping = "".join(f'"{name}" = "{retriever}"\n' for name in FILES)
    config.write_text(text + "\n[dataset_retrievers]\n" + mapping + "\n" + table)
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
    row: dict[str, float] = {}
    for dataset in data["datasets"]:
        name = dataset["name"]
        row[f"{name} mrr@10"] = dataset["aggregates"]["mrr@10"]["value"]
        row[f"{name} ndcg@10"] = dataset["aggregates"]["ndcg@10"]["value"]
        if name == "hybrid.jsonl":
            paraphrase = next(
                b
                for b in dataset["breakdowns"]
                if b["dimension"] == "query_type" and b["group"] == "paraphrase"
            )
            row["paraphrase mrr@10"] = paraphrase["metrics"]["mrr@10"]
    return row


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cache-dir", type=Path, default=REPO / ".retrieval-eval-cache")
    args = parser.parse_args()
    keys = [f"{name} {measure}" for name in FILES for measure in ("mrr@10", "ndcg@10")]
    keys.append("paraphrase mrr@10")
    print("| system | " + " | ".join(keys) + " |")
    print("|---" * (len(keys) + 1) + "|")
    for name, (retriever, table) in SYSTEMS.items():
        work = Path(tempfile.mkdtemp(prefix="bench-hybrid-"))
        try:
            row = measure(retriever, table, args.cache_dir, work)
        finally:
            shutil.rmtree(work)
        print(f"| {name} | " + " | ".join(f"{row[key]:.3f}" for key in keys) + " |")


if __name__ == "__main__":
    main()
