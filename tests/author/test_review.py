"""`retrieval-eval review` driven through stdin, as a person types."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from retrieval_eval.author.review import parse_hit_choice
from tests.author.cli import retrieval_eval

QUERIES = {
    "gen-kw-001": ("sourdough starter feeding", "recipes/sourdough-starter"),
    "gen-kw-002": ("Lisbon long weekend", "travel/lisbon-long-weekend"),
    "gen-kw-003": ("attention residue shutdown ritual", "books/deep-work"),
    "gen-kw-004": ("temples trains Japan winter", "travel/kyoto-temples"),
    "gen-kw-005": ("campervan ring road", "travel/iceland-ring-road"),
}


@pytest.fixture
def project(tmp_path: Path, repo_root: Path) -> Path:
    shutil.copytree(repo_root / "datasets" / "corpus", tmp_path / "notes")
    (tmp_path / "retrieval-eval.toml").write_text('corpus = "notes"\n')
    (tmp_path / "datasets").mkdir()
    lines = [
        json.dumps(
            {
                "query_id": qid,
                "query": query,
                "retrieval_type": "keyword",
                "expected_top_k_ids": [doc],
                "ground_truth_source": "synthetic",
                "query_type": "keyword",
            }
        )
        for qid, (query, doc) in QUERIES.items()
    ]
    (tmp_path / "datasets" / "keyword.jsonl").write_text("\n".join(lines) + "\n")
    return tmp_path


def _fixtures(project: Path) -> dict[str, dict[str, Any]]:
    text = (project / "datasets" / "keyword.jsonl").read_text()
    return {f["query_id"]: f for f in map(json.loads, text.splitlines())}


def _review(project: Path, keys: str) -> str:
    result = retrieval_eval("review", "datasets/keyword.jsonl", cwd=project, stdin=keys)
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_accept_skip_reject_edit_then_resume(project: Path) -> None:
    # accept 1, skip 2, reject 3, on 4 choose hits 2 and 1 as the expected ids then accept,
    # then quit before 5.
    out = _review(project, "a\ns\nr\ne\n2,1\na\nx\n")

    assert "[1/5] gen-kw-001  (keyword)" in out
    assert "Query:    sourdough starter feeding" in out
    assert "Source passage (recipes/sourdough-starter):" in out
    assert "Top 5 (bm25):" in out and "recipes/sourdough-starter  <- expected" in out
    fixtures = _fixtures(project)
    assert fixtures["gen-kw-001"]["ground_truth_source"] == "human-annotated"
    assert fixtures["gen-kw-002"]["ground_truth_source"] == "synthetic"  # skipped
    assert "gen-kw-003" not in fixtures  # rejected
    edited = fixtures["gen-kw-004"]
    assert edited["ground_truth_source"] == "human-annotated"
    shown = out.split("[4/5] gen-kw-004")[1]
    hits = re.findall(r"^  (\d)\. (\S+)", shown.split("[a]ccept")[0], re.MULTILINE)
    (_, first), (_, second) = hits[:2]
    assert edited["expected_top_k_ids"] == [second, first]
    assert fixtures["gen-kw-005"]["ground_truth_source"] == "synthetic"
    assert "1 left to review: run the same command to resume" in out

    # The next session starts at the one left; the skipped one stays skipped.
    resumed = _review(project, "a\n")
    assert "[1/1] gen-kw-005" in resumed and "all reviewed" in resumed
    assert _review(project, "").count("nothing to review") == 1


def test_input_ending_midway_loses_no_decision(project: Path) -> None:
    out = _review(project, "a\nq\nbudget trams in Lisbon\n")  # stdin ends after an edit
    fixtures = _fixtures(project)
    assert fixtures["gen-kw-001"]["ground_truth_source"] == "human-annotated"
    assert fixtures["gen-kw-002"]["query"] == "budget trams in Lisbon"
    assert "Query:    budget trams in Lisbon" in out  # shown again with its new hits
    assert "4 left to review" in out


def test_a_bad_hit_choice_is_asked_again(project: Path) -> None:
    out = _review(project, "e\n9\n0,0\n1\nx\n")
    assert out.count("give distinct numbers from 1 to ") == 2
    assert _fixtures(project)["gen-kw-001"]["ground_truth_source"] == "synthetic"


def test_an_invalid_dataset_line_is_named(project: Path) -> None:
    path = project / "datasets" / "keyword.jsonl"
    path.write_text(path.read_text() + '{"query_id": "x"}\n')
    result = retrieval_eval("review", "datasets/keyword.jsonl", cwd=project)
    assert result.returncode == 2
    assert "keyword.jsonl:6: not a valid fixture" in result.stderr


@example("\u00b9", 1)  # superscript one: isdigit() but not int(); once a ValueError
@given(st.text(max_size=20), st.integers(min_value=0, max_value=10))
def test_hit_choices_are_distinct_numbers_in_range(text: str, available: int) -> None:
    chosen = parse_hit_choice(text, available)
    if chosen is not None:
        assert chosen and len(set(chosen)) == len(chosen)
        assert all(0 <= index < available for index in chosen)
