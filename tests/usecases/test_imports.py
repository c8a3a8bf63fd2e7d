"""`retrieval-eval import queries` on a CSV and a JSONL log, through the console script:
de-duplicated, sampled by frequency (per stratum), labelled by clicks or else the
retriever's top hits, synthetic, and with --redact nothing personal written anywhere."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pytest

from tests.compare.conftest import Project
from tests.support.action import run_cli

EMAIL = "jo.bloggs+orders@example.co.uk"
PHONE = "+44 20 7946 0958"


@pytest.fixture
def project(tmp_path: Path) -> Project:
    project = Project(tmp_path)
    (project.datasets / "keyword.jsonl").unlink()  # only the corpus: the log makes the queries
    return project


def _fixtures(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _write_csv(path: Path, rows: list[dict[str, str]]) -> None:
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=["query", "clicked", "count", "locale"])
        writer.writeheader()
        writer.writerows(rows)


CSV_ROWS = [
    # "lemon tart" three ways: one group, sent 50 times, clicked tart 40 times, chicken 10.
    {"query": "lemon tart", "clicked": "recipes/lemon-tart", "count": "30", "locale": "en"},
    {"query": "Lemon  Tart", "clicked": "recipes/lemon-tart|recipes/lemon-chicken",
     "count": "10", "locale": "en"},
    {"query": "LEMON TART ", "clicked": "", "count": "10", "locale": "en"},
    {"query": "token bucket rate limiter", "clicked": "", "count": "30", "locale": "en"},
    {"query": f"rate limiter refund, order 4417 2288 1930, email {EMAIL}", "clicked": "",
     "count": "1", "locale": "en"},
    {"query": "marathon training calves", "clicked": "journal/marathon|not/in-corpus",
     "count": "3", "locale": "fr"},
    {"query": f"call me on {PHONE} about kyoto temples", "clicked": "", "count": "2",
     "locale": "fr"},
]  # fmt: skip


@pytest.mark.slow
def test_a_csv_log_becomes_sampled_synthetic_candidates(project: Project) -> None:
    root = project.root
    _write_csv(root / "search-log.csv", CSV_ROWS)
    args = ("import", "queries", "search-log.csv", "--retriever", "bm25", "--redact")
    everything = run_cli(root, *args, "--out", "all.jsonl")
    assert everything.returncode == 0, everything.log
    assert "read 7 log records (86 queries sent, 5 distinct)" in everything.stdout

    fixtures = {f["query"]: f for f in _fixtures(root / "all.jsonl")}
    assert len(fixtures) == 5
    tart = fixtures["lemon tart"]  # the form sent most
    assert tart["expected_top_k_ids"] == ["recipes/lemon-tart", "recipes/lemon-chicken"]
    assert tart["ground_truth_source"] == "synthetic" and tart["query_type"] == "logged"
    assert tart["retrieval_type"] == "hybrid" and tart["query_id"].startswith("log-")
    # Nobody clicked: bm25's top 3 are suggested. A click outside the corpus is dropped.
    bucket = fixtures["token bucket rate limiter"]
    assert bucket["expected_top_k_ids"] == ["software/rate-limit"]  # bm25's only match
    assert max(len(f["expected_top_k_ids"]) for f in fixtures.values()) <= 3  # --top 3
    assert fixtures["marathon training calves"]["expected_top_k_ids"] == ["journal/marathon"]
    # Redacted before it was searched or written.
    assert "rate limiter refund, order [number], email [email]" in fixtures
    assert "call me on [number] about kyoto temples" in fixtures
    for path in root.rglob("*"):
        if path.is_file() and path.name != "search-log.csv":
            data = path.read_bytes()
            assert EMAIL.encode() not in data and b"7946" not in data, path

    # Sampled: two of the five, one per locale, seeded (the same seed, the same file).
    strat = ("--sample", "2", "--stratify", "locale", "--seed", "7")
    sampled = run_cli(root, *args, *strat)
    assert sampled.returncode == 0, sampled.log
    out = project.datasets / "hybrid.jsonl"
    chosen = _fixtures(out)
    assert len(chosen) == 2
    assert sorted(tag for f in chosen for tag in f["tags"]) == ["locale:en", "locale:fr"]
    first = out.read_bytes()
    again = run_cli(root, *args, *strat, "--force")
    assert again.returncode == 0 and out.read_bytes() == first
    refused = run_cli(root, *args, *strat)
    assert refused.returncode == 2
    assert "datasets/hybrid.jsonl: exists; pass --append" in refused.stderr

    # They validate (as synthetic fixtures: nothing is human-annotated until review).
    valid = run_cli(root, "validate", "datasets", "--corpus", "datasets/corpus",
                    "--min-fixtures", "0", "--min-human", "0")  # fmt: skip
    assert valid.returncode == 0, valid.log


def test_a_jsonl_log_with_cited_ids_and_a_bad_line(project: Project) -> None:
    root = project.root
    records = [
        {"query": "blue-green deployment", "cited": ["software/deploy"], "count": 4},
        {"query": "Blue-green   deployment", "clicked": "software/deploy"},
        {"query": "sqlite wal", "clicked": ["software/sqlite-wal", "software/deploy"]},
        {"query": "sqlite wal", "clicked": ["software/sqlite-wal"], "count": 2},
    ]
    log = root / "queries.jsonl"
    log.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    done = run_cli(root, "import", "queries", "queries.jsonl", "--retrieval-type", "keyword")
    assert done.returncode == 0, done.log
    assert "2 labelled by clicks, 0 by" in done.stdout
    fixtures = {f["query"]: f for f in _fixtures(project.datasets / "keyword.jsonl")}
    assert fixtures["blue-green deployment"]["expected_top_k_ids"] == ["software/deploy"]
    assert fixtures["sqlite wal"]["expected_top_k_ids"] == [
        "software/sqlite-wal",
        "software/deploy",
    ]
    assert {f["retrieval_type"] for f in fixtures.values()} == {"keyword"}

    # --append adds only queries not already in the file.
    log.write_text(
        log.read_text() + json.dumps({"query": "SQLITE WAL"}) + "\n"
        + json.dumps({"query": "kyoto temples", "clicked": ["travel/kyoto"]}) + "\n",
        encoding="utf-8",
    )  # fmt: skip
    more = run_cli(root, "import", "queries", "queries.jsonl", "--retrieval-type", "keyword",
                   "--append")  # fmt: skip
    assert more.returncode == 0, more.log
    assert [f["query"] for f in _fixtures(project.datasets / "keyword.jsonl")][
        -1
    ] == "kyoto temples"
    assert len(_fixtures(project.datasets / "keyword.jsonl")) == 3

    log.write_text('{"query": "ok"}\n\n{"query": "broken"\n', encoding="utf-8")
    bad = run_cli(root, "import", "queries", "queries.jsonl", "--force")
    assert bad.returncode == 2
    assert "queries.jsonl:3: not valid JSON" in bad.stderr


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("query,count\nfine,2\nbad,many\n", "log.csv:3: count must be a positive whole number"),
        ("query,count\nfine,2\n,1\n", "log.csv:3: has no query"),
        ('query,count\n"fine\nacross lines",2\nx,1,3\n', "log.csv:4: has 3 fields"),
        ("text,count\nfine,2\n", "log.csv:1: the header has no `query` column"),
    ],
)
def test_a_bad_csv_line_is_named_with_its_line(project: Project, text: str, message: str) -> None:
    (project.root / "log.csv").write_text(text, encoding="utf-8")
    done = run_cli(project.root, "import", "queries", "log.csv")
    assert done.returncode == 2
    assert message in done.stderr
