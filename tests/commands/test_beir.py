"""`retrieval-eval beir`, run as a user runs it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

# Two queries over four documents; q2's relevant document is never retrieved by keywords.
CORPUS = [
    {"_id": "d1", "title": "Wing flutter", "text": "flutter of a swept wing at high speed"},
    {"_id": "d2", "title": "Heat transfer", "text": "heat transfer in a hypersonic boundary layer"},
    {"_id": "d3", "title": "Flutter tests", "text": "wind tunnel flutter tests"},
    {"_id": "d4", "title": "Buckling", "text": "buckling of thin cylindrical shells"},
]
QUERIES = [
    {"_id": "q1", "text": "wing flutter"},
    {"_id": "q2", "text": "collapse of shells under load"},
]
QRELS = "query-id\tcorpus-id\tscore\nq1\td1\t2\nq1\td3\t1\nq2\td4\t1\n"


@pytest.fixture
def beir_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "tiny"
    (folder / "qrels").mkdir(parents=True)
    (folder / "corpus.jsonl").write_text("".join(json.dumps(d) + "\n" for d in CORPUS))
    (folder / "queries.jsonl").write_text("".join(json.dumps(q) + "\n" for q in QUERIES))
    (folder / "qrels" / "test.tsv").write_text(QRELS)
    return folder


def _beir(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(Path(sys.executable).with_name("retrieval-eval")), "beir", *args],
        capture_output=True,
        text=True,
        check=False,
    )


def test_bm25_numbers_json_and_trec_run(beir_dir: Path, tmp_path: Path) -> None:
    json_path, run_path = tmp_path / "out" / "bm25.json", tmp_path / "out" / "bm25.run"
    done = _beir(
        str(beir_dir),
        "--retriever",
        "bm25",
        "--k",
        "10",
        "--json",
        str(json_path),
        "--run",
        str(run_path),
    )
    assert done.returncode == 0, done.stderr
    # q1 ranks d1 then d3 (perfect); q2 ranks d4 first ("shells"): every measure is 1.0
    # except p@5, which divides by 5 (q1: 2/5, q2: 1/5).
    lines = done.stdout.splitlines()
    assert lines[:8] == [
        "retriever    bm25",
        "queries      2 (documents: 4)",
        "ndcg@10      1.0000",
        "mrr@10       1.0000",
        "p@5          0.3000",
        "recall@100   1.0000",
        "map          1.0000",
        lines[7],
    ]
    assert lines[7].startswith("latency p50 ") and lines[7].endswith(" ms")
    summary = json.loads(json_path.read_text())
    assert {key: summary[key] for key in ("ndcg@10", "mrr@10", "p@5", "recall@100", "map")} == {
        "ndcg@10": 1.0,
        "mrr@10": 1.0,
        "p@5": pytest.approx(0.3),
        "recall@100": 1.0,
        "map": 1.0,
    }
    assert summary["num_queries"] == 2 and summary["k"] == 10
    assert summary["latency_p95_ms"] >= summary["latency_p50_ms"] > 0
    assert summary["setup_s"] > 0
    assert summary["config"]["k1"] == 0.9
    run = [line.split() for line in run_path.read_text().splitlines()]
    assert [(r[0], r[1], r[2], r[3], r[5]) for r in run] == [
        ("q1", "Q0", "d1", "1", "retrieval-eval-bm25"),
        ("q1", "Q0", "d3", "2", "retrieval-eval-bm25"),
        ("q2", "Q0", "d4", "1", "retrieval-eval-bm25"),
    ]
    assert float(run[0][4]) > float(run[1][4])


def test_like_ranks_by_matching_words(beir_dir: Path, tmp_path: Path) -> None:
    json_path = tmp_path / "like.json"
    done = _beir(str(beir_dir), "--retriever", "like", "--json", str(json_path))
    assert done.returncode == 0, done.stderr
    summary = json.loads(json_path.read_text())
    # q2 "collapse of shells under load": only d4 contains "shells".
    assert summary["mrr@10"] == 1.0


@pytest.mark.slow
def test_dense_finds_the_paraphrase(beir_dir: Path, tmp_path: Path) -> None:
    json_path = tmp_path / "dense.json"
    done = _beir(str(beir_dir), "--retriever", "dense", "--json", str(json_path))
    assert done.returncode == 0, done.stderr
    summary = json.loads(json_path.read_text())
    assert summary["recall@100"] == 1.0
    assert summary["config"]["model"] == "all-MiniLM-L6-v2"


def test_a_missing_split_is_an_error_naming_the_file(beir_dir: Path) -> None:
    done = _beir(str(beir_dir), "--split", "dev")
    assert done.returncode == 2
    qrels = beir_dir / "qrels" / "dev.tsv"
    assert done.stderr == f"error: {qrels}: no qrels for split 'dev' (available splits: test)\n"


def test_cranfield_bm25_prints_the_benchmarked_ndcg(cranfield_beir: Path) -> None:
    done = _beir(str(cranfield_beir), "--retriever", "bm25")
    assert done.returncode == 0, done.stderr
    assert "queries      225 (documents: 1398)" in done.stdout
    assert "ndcg@10      0.3165" in done.stdout
