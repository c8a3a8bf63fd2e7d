"""A tiny BEIR collection and `retrieval-eval beir --config` on it, as a user runs the
hybrid's rerank stage: what the rerank tests share."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest

REPO_ROOT = Path(__file__).resolve().parents[3]
CLI = Path(sys.executable).parent / "retrieval-eval"

CORPUS = [
    {"_id": "d1", "title": "Wing flutter", "text": "flutter of a swept wing at high speed"},
    {"_id": "d2", "title": "Flutter tests", "text": "wind tunnel flutter tests of a wing"},
    {"_id": "d3", "title": "Wing loads", "text": "loads on a wing in gusts"},
    {"_id": "d4", "title": "Buckling", "text": "buckling of thin cylindrical shells"},
]
QUERIES = [{"_id": "q1", "text": "wing flutter"}, {"_id": "q2", "text": "shells buckling"}]
QRELS = "query-id\tcorpus-id\tscore\nq1\td1\t2\nq1\td2\t1\nq2\td4\t1\n"


@pytest.fixture
def beir_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "tiny"
    (folder / "qrels").mkdir(parents=True)
    (folder / "corpus.jsonl").write_text("".join(json.dumps(d) + "\n" for d in CORPUS))
    (folder / "queries.jsonl").write_text("".join(json.dumps(q) + "\n" for q in QUERIES))
    (folder / "qrels" / "test.tsv").write_text(QRELS)
    return folder


def config_file(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "retrieval-eval.toml"
    path.write_text("[retrievers.hybrid]\n" + body)
    return path


def beir(
    beir_dir: Path, tmp_path: Path, config: Path | None, key: str | None = None, name: str = "r"
) -> tuple[subprocess.CompletedProcess[str], dict[str, list[str]], dict[str, Any]]:
    run, summary = tmp_path / f"{name}.run", tmp_path / f"{name}.json"
    env = {k: v for k, v in os.environ.items() if k != "ANTHROPIC_API_KEY"}
    if key is not None:
        env["ANTHROPIC_API_KEY"] = key
    env["PYTHONPATH"] = str(REPO_ROOT)  # where the user's factory module lives
    args = [str(CLI), "beir", str(beir_dir), "--retriever", "hybrid", "--k", "4"]
    args += ["--run", str(run), "--json", str(summary)]
    # A cache of its own each time: every call asks the reranker afresh.
    args += ["--cache-dir", tempfile.mkdtemp(dir=tmp_path)]
    if config is not None:
        args += ["--config", str(config)]
    done = subprocess.run(args, capture_output=True, text=True, check=False, env=env, cwd=REPO_ROOT)
    if done.returncode != 0:
        return done, {}, {}
    rankings: dict[str, list[str]] = {}
    for line in run.read_text().splitlines():
        qid, _, doc_id, *_ = line.split()
        rankings.setdefault(qid, []).append(doc_id)
    return done, rankings, json.loads(summary.read_text())
