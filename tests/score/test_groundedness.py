"""Keyword groundedness: the share of expected keywords the retrieved text holds."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from retrieval_eval.score.groundedness import groundedness
from tests.support.action import run_cli


def test_groundedness_counts_keywords_case_insensitively() -> None:
    texts = ["Visit the Eiffel tower", "then walk along the SEINE in paris"]
    assert groundedness(["Paris", "eiffel", "Louvre"], texts) == 2 / 3
    assert groundedness(["Paris", "PARIS", "louvre"], texts) == 1 / 2  # duplicates count once


def test_groundedness_of_no_expected_keywords_is_one() -> None:
    assert groundedness([], ["anything at all"]) == 1.0
    assert groundedness(["  "], []) == 1.0
    assert groundedness(["tomato"], []) == 0.0


# A user's own retriever that finds documents by the words of their text but returns each
# hit without it: `Hit(id, score, "")`. `text = true` returns the text, as it should.
TEXTLESS_FACTORY = """
from retrieval_eval.retrieval.base import Hit, SearchResult


class WordSearch:
    name = "word-search"

    def __init__(self, text):
        self.text = text

    def index(self, corpus):
        self.docs = {doc.id: doc.text for doc in corpus.documents}
        self.tags = {doc.id: set(doc.tags) for doc in corpus.documents}

    def search(self, query, k, tags=()):
        words = query.lower().split()
        scored = sorted(
            ((-sum(w in text.lower() for w in words), doc_id, text)
             for doc_id, text in self.docs.items()
             if not tags or self.tags[doc_id] & set(tags)),
        )
        return SearchResult(hits=tuple(
            Hit(doc_id, float(-score), text if self.text else "")
            for score, doc_id, text in scored[:k] if score < 0
        ))

    def describe(self):
        return {"text": self.text}


def make(text=False):
    return WordSearch(text)
"""

# The seed's rule gates every measured metric, groundedness included, which is what this
# test is about (the default rule gates the headline metric alone).
CUSTOM_CONFIG = """\
gate_rule = "any-metric"

[dataset_retrievers]
"semantic.jsonl" = "bm25"
"keyword.jsonl" = "custom"
"hybrid.jsonl" = "bm25"

[retrievers.custom]
python = "word_search:make"
options = { text = TEXT }

[thresholds]
"p@5" = false
"ndcg@10" = false
"mrr@10" = false
"""


def _project(tmp_path: Path, repo_root: Path, *, text: bool) -> Path:
    shutil.copytree(repo_root / "datasets", tmp_path / "datasets")
    (tmp_path / "word_search.py").write_text(TEXTLESS_FACTORY)
    config = CUSTOM_CONFIG.replace("TEXT", "true" if text else "false")
    (tmp_path / "retrieval-eval.toml").write_text(config)
    return tmp_path


def test_hits_without_text_leave_groundedness_out_of_the_gate_with_one_warning(
    tmp_path: Path, repo_root: Path
) -> None:
    project = _project(tmp_path, repo_root, text=False)

    done = run_cli(project, "run")

    assert done.returncode == 0, done.log
    warnings = [line for line in done.stderr.splitlines() if "groundedness" in line]
    assert len(warnings) == 1, done.stderr
    assert warnings[0].startswith("warning: keyword.jsonl: groundedness is left out of the gate: ")
    assert "hits carry no text" in warnings[0]
    report = json.loads((project / "retrieval-eval-report" / "report.json").read_text())
    by_name = {d["name"]: d for d in report["datasets"]}
    keyword = by_name["keyword.jsonl"]
    assert "groundedness" not in keyword["aggregates"]
    assert "groundedness" not in {row["metric"] for row in keyword["rows"]}
    assert "hits carry no text" in keyword["groundedness_left_out"]
    # The other datasets' retriever returns text: their groundedness is measured and gated.
    assert by_name["semantic.jsonl"]["groundedness_left_out"] is None
    gated = {row["metric"]: row["gated"] for row in by_name["semantic.jsonl"]["rows"]}
    assert gated["groundedness"] is True
    markdown = (project / "retrieval-eval-report" / "report.md").read_text()
    assert markdown.count("Groundedness is not measured here, nor gated") == 1
    baseline = json.loads((project / "baseline.json").read_text())
    assert "groundedness" not in baseline["datasets"]["keyword.jsonl"]["aggregates"]


def test_the_same_retriever_returning_text_is_measured(tmp_path: Path, repo_root: Path) -> None:
    project = _project(tmp_path, repo_root, text=True)

    done = run_cli(project, "run")

    assert done.returncode == 0, done.log
    assert "groundedness" not in done.stderr
    report = json.loads((project / "retrieval-eval-report" / "report.json").read_text())
    keyword = next(d for d in report["datasets"] if d["name"] == "keyword.jsonl")
    assert keyword["aggregates"]["groundedness"]["value"] > 0.5
    assert keyword["groundedness_left_out"] is None
