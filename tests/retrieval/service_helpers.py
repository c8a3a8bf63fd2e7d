"""What the service retrievers' tests share: the console script, and a BEIR folder made
from this repository's own notes and golden queries (61 notes, 77 queries)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
CLI = str(Path(sys.executable).parent / "retrieval-eval")
MEASURES = ("ndcg@10", "mrr@10", "p@5", "recall@100", "map")

TINY_CORPUS = [
    {"_id": "d1", "title": "Wing flutter", "text": "flutter of a swept wing at high speed"},
    {"_id": "d2", "title": "Heat transfer", "text": "heat transfer in a hypersonic boundary layer"},
    {"_id": "d3", "title": "Flutter tests", "text": "wind tunnel flutter tests"},
    {"_id": "d4", "title": "Buckling", "text": "buckling of thin cylindrical shells"},
]
TINY_QUERIES = [
    {"_id": "q1", "text": "wing flutter"},
    {"_id": "q2", "text": "collapse of shells under load"},
    {"_id": "q3", "text": "heat transfer"},
    {"_id": "q4", "text": "flutter tests in a wind tunnel"},
    {"_id": "q5", "text": "thin shells"},
    {"_id": "q6", "text": "hypersonic boundary layer"},
]
TINY_QRELS = {"q1": {"d1": 2, "d3": 1}, "q2": {"d4": 1}, "q3": {"d2": 1}, "q4": {"d3": 1}}
TINY_QRELS.update({"q5": {"d4": 1}, "q6": {"d2": 1}})


def write_beir(
    folder: Path,
    corpus: list[dict[str, str]],
    queries: list[dict[str, str]],
    qrels: Mapping[str, Mapping[str, int]],
) -> Path:
    (folder / "qrels").mkdir(parents=True)
    (folder / "corpus.jsonl").write_text("".join(json.dumps(d) + "\n" for d in corpus))
    (folder / "queries.jsonl").write_text("".join(json.dumps(q) + "\n" for q in queries))
    lines = ["query-id\tcorpus-id\tscore"]
    lines += [f"{q}\t{d}\t{g}" for q, docs in qrels.items() for d, g in docs.items()]
    (folder / "qrels" / "test.tsv").write_text("\n".join(lines) + "\n")
    return folder


def tiny_beir(folder: Path) -> Path:
    return write_beir(folder, TINY_CORPUS, TINY_QUERIES, TINY_QRELS)


def notes_beir(folder: Path) -> Path:
    """The repository's Markdown notes as a BEIR corpus, its golden queries as BEIR queries."""
    corpus = []
    for path in sorted((REPO / "datasets" / "corpus").rglob("*.md")):
        doc_id = path.relative_to(REPO / "datasets" / "corpus").with_suffix("").as_posix()
        text = path.read_text(encoding="utf-8")
        if text.startswith("---"):
            text = text.split("---", 2)[2]
        corpus.append({"_id": doc_id, "title": "", "text": text.strip()})
    queries, qrels = [], {}
    for dataset in sorted((REPO / "datasets").glob("*.jsonl")):
        for line in dataset.read_text(encoding="utf-8").splitlines():
            fixture = json.loads(line)
            if not fixture.get("expected_top_k_ids"):
                continue
            queries.append({"_id": fixture["query_id"], "text": fixture["query"]})
            qrels[fixture["query_id"]] = dict.fromkeys(fixture["expected_top_k_ids"], 1)
    return write_beir(folder, corpus, queries, qrels)


def run_cli(
    *args: str, env: Mapping[str, str] | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [CLI, *args],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, **(env or {})},
        cwd=cwd,
    )


def beir_json(
    data: Path,
    retriever: str,
    out: Path,
    *,
    config: Path | None = None,
    env: Mapping[str, str] | None = None,
    extra: tuple[str, ...] = (),
) -> dict[str, Any]:
    """Run `retrieval-eval beir` and return its --json object (fails the test on an error)."""
    args = [str(data), "--retriever", retriever, "--json", str(out), *extra]
    if config is not None:
        args += ["--config", str(config)]
    done = run_cli("beir", *args, env=env)
    assert done.returncode == 0, done.stderr
    summary: dict[str, Any] = json.loads(out.read_text())
    return summary


def assert_same_metrics(left: Mapping[str, Any], right: Mapping[str, Any], tol: float) -> None:
    for measure in MEASURES:
        assert abs(left[measure] - right[measure]) <= tol, (measure, left[measure], right[measure])


def repo_fixtures() -> list[dict[str, Any]]:
    """This repository's golden fixtures, dataset by dataset (sorted), in file order."""
    return [
        json.loads(line)
        for dataset in sorted((REPO / "datasets").glob("*.jsonl"))
        for line in dataset.read_text(encoding="utf-8").splitlines()
    ]


def repo_run_args(folder: Path) -> list[str]:
    """`run` on this repository's datasets and notes, writing into ``folder``."""
    return [
        "run",
        "--datasets",
        str(REPO / "datasets"),
        "--corpus",
        str(REPO / "datasets" / "corpus"),
        "--baseline",
        str(folder / "baseline.json"),
        "--report-dir",
        str(folder / "report"),
    ]


def run_repo_datasets(
    folder: Path, retriever: str, table: str, *, env: Mapping[str, str] | None = None
) -> tuple[subprocess.CompletedProcess[str], dict[str, Any]]:
    """`retrieval-eval run` on this repository's datasets and notes with every dataset
    served by ``retriever``, configured by ``table`` (TOML lines of its
    [retrievers.<retriever>] table); returns the process and report.json."""
    datasets = sorted(path.name for path in (REPO / "datasets").glob("*.jsonl"))
    mapping = "".join(f'"{name}" = "{retriever}"\n' for name in datasets)
    (folder / "retrieval-eval.toml").write_text(
        f"[dataset_retrievers]\n{mapping}\n[retrievers.{retriever}]\n{table}"
    )
    done = run_cli(*repo_run_args(folder), "--quiet", cwd=folder, env=env)
    assert done.returncode in (0, 1), done.stderr
    report: dict[str, Any] = json.loads((folder / "report" / "report.json").read_text())
    return done, report
