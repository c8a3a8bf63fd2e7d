"""A tiny real project for the gate tests: Markdown notes, one keyword dataset, a config.

BM25 and LIKE index it in milliseconds, so every gate test runs the real
pipeline (validation, retrieval, metrics, baseline, report) end to end.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from retrieval_eval.pipeline import RunOutcome
from retrieval_eval.settings import RunSettings, load_settings
from retrieval_eval.usecases.evaluate import run_evaluation

NOTES = {
    "recipes/lemon-tart": (
        ["recipes", "baking"],
        "# Lemon tart\n\nA sharp lemon tart with buttery pastry. Bake the pastry blind, "
        "then fill it with lemon curd and bake until just set.",
    ),
    "recipes/lemon-chicken": (
        ["recipes"],
        "# Roast chicken\n\nRoast the chicken with garlic, thyme and one lemon for an hour.",
    ),
    "recipes/shakshuka": (
        ["recipes", "breakfast"],
        "# Shakshuka\n\nEggs poached in a spiced tomato sauce with cumin and paprika.",
    ),
    "travel/lisbon": (
        ["travel", "portugal"],
        "# Trip to Lisbon\n\n## Budget\n\nTrams, pastel de nata and fado cost about forty "
        "euros a day.",
    ),
    "travel/kyoto": (
        ["travel", "japan"],
        "# Kyoto in autumn\n\nTemples, maple leaves and the bamboo grove in Arashiyama.",
    ),
    "travel/iceland": (
        ["travel"],
        "# Iceland ring road\n\nWaterfalls, glaciers and a rented camper van along the ring road.",
    ),
    "software/deploy": (
        ["software", "devops"],
        "# Blue-green deployment\n\nShip a release by switching the router between two "
        "identical environments.",
    ),
    "software/rate-limit": (
        ["software"],
        "# Token bucket rate limiter\n\nRefill tokens at a fixed rate and reject requests "
        "when the bucket is empty.",
    ),
    "software/sqlite-wal": (
        ["software", "databases"],
        "# SQLite write-ahead log\n\nWAL mode lets readers continue while a writer appends "
        "to the log.",
    ),
    "books/atomic-habits": (
        ["books"],
        "# Atomic Habits\n\nSmall habits compound; make cues obvious and rewards satisfying.",
    ),
    "books/deep-work": (
        ["books"],
        "# Deep Work\n\nSchedule long blocks of distraction-free concentration.",
    ),
    "journal/marathon": (
        ["journal", "fitness"],
        "# Marathon training, week 12\n\nA long run of thirty kilometres, sore calves, "
        "and far too much pasta afterwards.",
    ),
}


def fixture(query_id: str, query: str, expected: Sequence[str], **extra: Any) -> dict[str, Any]:
    record: dict[str, Any] = {
        "query_id": query_id,
        "query": query,
        "retrieval_type": "keyword",
        "expected_top_k_ids": list(expected),
        "ground_truth_source": "human-annotated",
    }
    record.update(extra)
    return record


KEYWORD_FIXTURES = [
    fixture(
        "kw-01",
        "lemon tart pastry",
        ["recipes/lemon-tart"],
        query_type="exact_match",
        tags=["recipes"],
        expected_keywords=["lemon", "pastry"],
    ),
    fixture(
        "kw-02",
        "shakshuka eggs tomato",
        ["recipes/shakshuka"],
        query_type="exact_match",
        tags=["recipes"],
    ),
    fixture(
        "kw-03",
        "Lisbon budget euros",
        ["travel/lisbon"],
        query_type="exact_match",
        tags=["travel"],
        expected_keywords=["euros", "trams"],
    ),
    fixture(
        "kw-04", "Kyoto temples maple", ["travel/kyoto"], query_type="exact_match", tags=["travel"]
    ),
    fixture(
        "kw-05",
        "token bucket rate limiter",
        ["software/rate-limit"],
        query_type="exact_match",
        tags=["software"],
    ),
    fixture(
        "kw-06",
        "SQLite WAL readers writer",
        ["software/sqlite-wal"],
        query_type="exact_match",
        tags=["software"],
    ),
    fixture(
        "kw-07",
        "blue-green deployment router",
        ["software/deploy"],
        query_type="exact_match",
        tags=["software"],
    ),
    fixture(
        "kw-08",
        "marathon long run calves",
        ["journal/marathon"],
        query_type="exact_match",
        tags=["journal"],
        ground_truth_source="synthetic",
    ),
    fixture(
        "kw-09",
        "habits cues rewards",
        ["books/atomic-habits"],
        query_type="paraphrase",
        tags=["books"],
        ground_truth_source="synthetic",
    ),
    fixture(
        "kw-10",
        "how to stay focused for hours",
        ["books/deep-work"],
        query_type="paraphrase",
        tags=["books"],
        ground_truth_source="synthetic",
    ),
    fixture(
        "kw-11",
        "lemon",
        ["recipes/lemon-tart", "recipes/lemon-chicken"],
        query_type="exact_match",
        tags=["recipes"],
    ),
    fixture(
        "kw-12",
        "gardening notes",
        [],
        query_type="tag_filter",
        expect_empty=True,
        filters={"tags": ["gardening"]},
    ),
]

# Single-answer queries cannot reach the default P@5 >= 0.65 (at most 1/5), so the
# tiny project drops that threshold, as docs/configuration.md advises.
# The seed's rule (any gated metric drops more than the tolerance): what these tests pin.
CONFIG = """\
min_fixtures = 5
min_human = 3
gate_rule = "any-metric"

[dataset_retrievers]
"keyword.jsonl" = "bm25"

[thresholds]
"p@5" = false
"""


def write_dataset(path: Path, fixtures: Sequence[dict[str, Any]]) -> None:
    path.write_text("".join(json.dumps(f) + "\n" for f in fixtures), encoding="utf-8")


class Project:
    """A working directory laid out like a user's repository."""

    def __init__(self, root: Path):
        self.root = root
        self.datasets = root / "datasets"
        self.corpus = self.datasets / "corpus"
        self.baseline = root / "baseline.json"
        self.report_dir = root / "retrieval-eval-report"
        for note_id, (tags, body) in NOTES.items():
            path = self.corpus / f"{note_id}.md"
            path.parent.mkdir(parents=True, exist_ok=True)
            front = "---\ntags: [" + ", ".join(tags) + "]\n---\n"
            path.write_text(front + body + "\n", encoding="utf-8")
        write_dataset(self.datasets / "keyword.jsonl", KEYWORD_FIXTURES)
        (root / "retrieval-eval.toml").write_text(CONFIG, encoding="utf-8")

    def settings(self, **overrides: object) -> RunSettings:
        return load_settings(workdir=self.root, config_file=None, overrides=overrides)

    def run(self, **overrides: object) -> RunOutcome:
        return run_evaluation(self.settings(**overrides), progress=False, log=lambda _: None)

    def baseline_data(self) -> dict[str, Any]:
        data: dict[str, Any] = json.loads(self.baseline.read_text(encoding="utf-8"))
        return data

    def write_baseline_data(self, data: dict[str, Any]) -> None:
        self.baseline.write_text(json.dumps(data, indent=2), encoding="utf-8")


@pytest.fixture
def project(tmp_path: Path) -> Project:
    return Project(tmp_path)
