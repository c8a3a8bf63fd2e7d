"""`retrieval-eval compare`, run as a user runs it: three retrievers on a small BEIR folder,
the same table as the comment's challengers, p-values a test of our own agrees with, and a
second comparison that retrieves nothing."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import pytest

from tests.action.project import CONFIG, FIXTURES, NOTES, SEMANTIC_FIXTURES, fixture_lines
from tests.support.action import run_cli

pytestmark = pytest.mark.slow

# Twelve short documents in three topics, twelve queries: some share words with their
# document (BM25's), some are paraphrases (dense's); small enough to enumerate every sign
# pattern of the paired test (2**12).
DOCS = {
    "d01": "Shakshuka: eggs poached in a spiced tomato sauce with cumin and peppers.",
    "d02": "Mushroom risotto: arborio rice stirred slowly with stock and parmesan.",
    "d03": "Sourdough bread needs a lively starter, a long proof and a hot oven.",
    "d04": "Lisbon: trams climb the hills, pastel de nata in every bakery.",
    "d05": "Kyoto: temples, the bamboo forest of Arashiyama, a night in a ryokan.",
    "d06": "Iceland's ring road passes glaciers, black sand beaches and geysers.",
    "d07": "Deploy checklist: run the migrations, ship the release, watch the error rate.",
    "d08": "API design: versioning, pagination and idempotent requests.",
    "d09": "Postmortems are blameless: a timeline, the root cause and action items.",
    "d10": "Deep work: long hours of focus on hard problems without distraction.",
    "d11": "Marathon training: easy runs, one long run a week, taper before the race.",
    "d12": "Houseplants: water the fern often, the cactus rarely, give both light.",
}
QUERIES = {
    "q01": ("eggs poached in tomato sauce", "d01"),
    "q02": ("creamy Italian rice dinner", "d02"),
    "q03": ("starter and proof for bread", "d03"),
    "q04": ("trams and pastel de nata", "d04"),
    "q05": ("old shrines in Japan", "d05"),
    "q06": ("volcanic island road trip", "d06"),
    "q07": ("run the migrations before the release", "d07"),
    "q08": ("pagination and idempotent requests", "d08"),
    "q09": ("learning from outages without blame", "d09"),
    "q10": ("concentrating for hours", "d10"),
    "q11": ("preparing for a 42 km race", "d11"),
    "q12": ("caring for indoor greenery", "d12"),
}


def _beir_folder(root: Path) -> Path:
    folder = root / "tiny-beir"
    (folder / "qrels").mkdir(parents=True)
    (folder / "corpus.jsonl").write_text(
        "".join(json.dumps({"_id": d, "title": "", "text": t}) + "\n" for d, t in DOCS.items())
    )
    (folder / "queries.jsonl").write_text(
        "".join(json.dumps({"_id": q, "text": t}) + "\n" for q, (t, _) in QUERIES.items())
    )
    (folder / "qrels" / "test.tsv").write_text(
        "query-id\tcorpus-id\tscore\n" + "".join(f"{q}\t{d}\t1\n" for q, (_, d) in QUERIES.items())
    )
    return folder


def sign_flip_p(diffs: list[float]) -> float:
    """Two-sided p of "the mean difference is 0", over every one of the 2**n sign patterns."""
    observed = abs(sum(diffs)) / len(diffs)
    extreme = 0
    for signs in itertools.product((1, -1), repeat=len(diffs)):
        flipped = abs(sum(s * d for s, d in zip(signs, diffs, strict=True))) / len(diffs)
        extreme += flipped >= observed - 1e-12
    return extreme / 2 ** len(diffs)


def holm(p_values: list[float]) -> list[float]:
    """Holm's step-down correction, written out: the i-th smallest times (m − i), running max."""
    ranked = sorted(enumerate(p_values), key=lambda pair: pair[1])
    adjusted = [0.0] * len(p_values)
    largest = 0.0
    for position, (index, p) in enumerate(ranked):
        largest = max(largest, min(1.0, (len(p_values) - position) * p))
        adjusted[index] = largest
    return adjusted


def _compare(cwd: Path, *args: str) -> tuple[dict[str, Any], str]:
    run = run_cli(cwd, "compare", *args, "--json")
    assert run.returncode == 0, run.log
    payload: dict[str, Any] = json.loads(run.stdout)
    return payload, run.stderr


def test_three_retrievers_on_a_beir_folder(tmp_path: Path) -> None:
    folder = _beir_folder(tmp_path)
    sides = ["--retriever", "bm25", "--retriever", "dense", "--retriever", "hybrid"]

    markdown = run_cli(tmp_path, "compare", str(folder), *sides)
    assert markdown.returncode == 0, markdown.log
    lines = markdown.stdout.splitlines()
    assert lines[0] == "### tiny-beir"
    assert lines[2].startswith("| Retriever | Kind | MRR@10 | Δ | p | NDCG@10 | Δ | p | W/T/L |")
    assert lines[4].startswith("| **bm25** (reference) | bm25 |")
    assert lines[5].startswith("| dense | dense |") and lines[6].startswith("| hybrid | hybrid |")
    assert "Holm-corrected across 2 challengers" in markdown.stdout
    assert markdown.stderr.count("queries retrieved") == 3  # each side once
    # One index per retriever and settings: hybrid fuses the dense and bm25 sides' indexes.
    assert markdown.stderr.count("indexing for dense: 12 documents in") == 1, markdown.stderr
    assert markdown.stderr.count("indexing for bm25") == 1, markdown.stderr

    payload, stderr = _compare(tmp_path, str(folder), *sides)
    assert stderr.count("queries from the run cache") == 3, stderr  # nothing retrieved again
    assert "queries retrieved" not in stderr and "indexing" not in stderr
    (table,) = payload["tables"]  # BEIR has no query types: one table
    assert (table["dataset"], table["reference"], table["num_queries"]) == ("tiny-beir", "bm25", 12)
    per_query = payload["per_query"]["tiny-beir"]
    assert set(per_query) == {"bm25", "dense", "hybrid"}

    # Our own paired test, exact, then Holm across the two challengers, per metric.
    for metric in payload["measures"]:
        raw = []
        for side in ("dense", "hybrid"):
            diffs = [per_query[side][q][metric] - per_query["bm25"][q][metric] for q in QUERIES]
            raw.append(sign_flip_p(diffs))
        expected = holm(raw)
        for side, p_raw, p_holm in zip(("dense", "hybrid"), raw, expected, strict=True):
            row = next(c for c in table["challengers"] if c["name"] == side)
            shown = next(m for m in row["metrics"] if m["metric"] == metric)
            assert shown["p_uncorrected"] == pytest.approx(p_raw, abs=1e-12), (side, metric)
            assert shown["p_value"] == pytest.approx(p_holm, abs=1e-12), (side, metric)
            mean = sum(per_query[side][q][metric] for q in QUERIES) / len(QUERIES)
            assert shown["value"] == pytest.approx(mean)
    for row in table["challengers"]:
        first = {
            q: per_query[row["name"]][q]["mrr@10"] - per_query["bm25"][q]["mrr@10"] for q in QUERIES
        }
        assert row["wins"] == sum(d > 1e-9 for d in first.values())
        assert row["losses"] == sum(d < -1e-9 for d in first.values())
        assert row["wins"] + row["ties"] + row["losses"] == 12
        assert row["latency_p95_ms"] > 0 and row["cost_per_query_usd"] == 0.0

    # The cache is keyed on the side's whole configuration: another fusion retrieves again.
    (tmp_path / "retrieval-eval.toml").write_text(
        '[challengers.rrf]\nretriever = "hybrid"\n\n[challengers.rrf.hybrid]\nfusion = "rrf"\n'
    )
    again, stderr = _compare(tmp_path, str(folder), *sides, "--retriever", "rrf")
    assert stderr.count("queries from the run cache") == 3, stderr
    assert "rrf on tiny-beir: 12 queries retrieved" in stderr
    assert again["tables"][0]["challengers"][:2] != table["challengers"]  # Holm over 3 now
    assert again["per_query"]["tiny-beir"]["dense"] == per_query["dense"]


def test_a_datasets_folder_is_compared_per_query_type(tmp_path: Path) -> None:
    files = {f"datasets/corpus/{doc}.md": text for doc, text in NOTES.items()}
    keyword = [json.loads(line) for line in fixture_lines(FIXTURES).splitlines()]
    semantic = [
        json.loads(line) for line in fixture_lines(SEMANTIC_FIXTURES, "semantic").splitlines()
    ]
    for record in keyword:
        record.update(query_type="exact words", retrieval_type="hybrid")
    for record in semantic:
        record.update(query_type="paraphrase", retrieval_type="hybrid")
    files["datasets/hybrid.jsonl"] = "".join(json.dumps(r) + "\n" for r in keyword + semantic)
    files["retrieval-eval.toml"] = CONFIG + '\n[challengers.broken]\nretriever = "custom"\n\n'
    files["retrieval-eval.toml"] += '[challengers.broken.custom]\ncommand = ["./no-such-program"]\n'
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)

    payload, stderr = _compare(
        tmp_path, "--retriever", "bm25", "--retriever", "like", "--retriever", "broken"
    )
    tables = {t["group"]: t for t in payload["tables"]}
    assert list(tables) == [None, "exact words", "paraphrase"]
    assert [tables[g]["num_queries"] for g in tables] == [10, 6, 4]
    broken = next(c for c in tables[None]["challengers"] if c["name"] == "broken")
    assert broken["metrics"] == [] and "no-such-program" in broken["warning"], stderr
    markdown = run_cli(tmp_path, "compare", "--retriever", "bm25", "--retriever", "like")
    assert "### hybrid.jsonl · query type: paraphrase" in markdown.stdout, markdown.log


def test_invalid_datasets_fail_with_every_problem_at_its_line(tmp_path: Path) -> None:
    (tmp_path / "datasets" / "corpus").mkdir(parents=True)
    (tmp_path / "datasets" / "corpus" / "a.md").write_text("# A\n\nSome text.\n")
    (tmp_path / "datasets" / "keyword.jsonl").write_text('{"query_id": "k1"}\nnot json\n')
    run = run_cli(tmp_path, "compare", "--retriever", "bm25", "--retriever", "like")
    assert run.returncode == 1, run.log
    assert "datasets/keyword.jsonl:1: " in run.stderr and "datasets/keyword.jsonl:2: " in run.stderr
