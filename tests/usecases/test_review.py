"""`retrieval-eval review` (the use case): which corpus and retriever a review reads, as
the settings give them, and what the user is told when there is nothing left to review."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.author.cli import retrieval_eval


def _fixture(query_id: str, source: str) -> str:
    return json.dumps(
        {
            "query_id": query_id,
            "query": "sourdough starter feeding",
            "retrieval_type": "keyword",
            "expected_top_k_ids": ["recipes/sourdough-starter"],
            "ground_truth_source": source,
            "query_type": "keyword",
        }
    )


@pytest.fixture
def project(tmp_path: Path, repo_root: Path) -> Path:
    shutil.copytree(repo_root / "datasets" / "corpus", tmp_path / "notes")
    (tmp_path / "retrieval-eval.toml").write_text(
        'corpus = "missing"\n[dataset_retrievers]\n"keyword.jsonl" = "bm25"\n'
    )
    (tmp_path / "datasets").mkdir()
    return tmp_path


def test_a_file_with_no_synthetic_fixture_left_has_nothing_to_review(project: Path) -> None:
    (project / "datasets" / "keyword.jsonl").write_text(_fixture("k1", "human-annotated") + "\n")
    done = retrieval_eval("review", "datasets/keyword.jsonl", "--corpus", "notes", cwd=project)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "datasets/keyword.jsonl: nothing to review (no synthetic fixtures left)\n"


def test_the_corpus_flag_overrides_the_files_and_the_files_retriever_is_used(
    project: Path,
) -> None:
    (project / "datasets" / "keyword.jsonl").write_text(_fixture("k1", "synthetic") + "\n")
    from_file = retrieval_eval("review", "datasets/keyword.jsonl", cwd=project, stdin="x\n")
    assert from_file.returncode == 2
    assert "missing" in from_file.stderr
    done = retrieval_eval(
        "review", "datasets/keyword.jsonl", "--corpus", "notes", cwd=project, stdin="a\n"
    )
    assert done.returncode == 0, done.stderr
    assert "Top 5 (bm25):" in done.stdout  # the retriever [dataset_retrievers] maps the file to
    assert "1 accepted, 0 rejected, 0 skipped (0 edited); all reviewed" in done.stdout
    [line] = (project / "datasets" / "keyword.jsonl").read_text().splitlines()
    assert json.loads(line)["ground_truth_source"] == "human-annotated"
