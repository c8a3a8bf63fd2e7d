"""What `retrieval-eval run` prints: on a terminal a summary and the next step; in a
pipe report.md's text, as scripts and the docs expect."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.author.cli import retrieval_eval
from tests.support.terminal import on_terminal

# BM25 everywhere: no embedding model to wait for, the same gate.
CONFIG = """\
datasets = "datasets"
corpus = "datasets/corpus"

[dataset_retrievers]
"semantic.jsonl" = "bm25"
"keyword.jsonl" = "bm25"
"hybrid.jsonl" = "bm25"

[thresholds]
"p@5" = false
"ndcg@10" = false
MRR_BOUND
"""


@pytest.fixture
def project(tmp_path: Path, repo_root: Path) -> Path:
    shutil.copytree(repo_root / "datasets", tmp_path / "datasets")
    (tmp_path / "retrieval-eval.toml").write_text(CONFIG.replace("MRR_BOUND", '"mrr@10" = false'))
    return tmp_path


def _blank_the_keyword_answers(project: Path, count: int) -> list[str]:
    """Empty the body of the notes the first keyword queries expect (tags kept)."""
    lines = (project / "datasets" / "keyword.jsonl").read_text().splitlines()
    expected = [json.loads(line)["expected_top_k_ids"] for line in lines]
    ids = [e[0] for e in expected if e][:count]
    for doc_id in ids:
        note = project / "datasets" / "corpus" / f"{doc_id}.md"
        text = note.read_text()
        front = text.split("\n---", 1)[0] + "\n---\n" if text.startswith("---") else ""
        note.write_text(front + "# x\n\nnothing here, just filler text about nothing at all.\n")
    return ids


def test_a_terminal_gets_a_summary_and_the_commit_step(project: Path) -> None:
    result = on_terminal("run", "--no-progress", cwd=project, env={"NO_COLOR": "1"})

    assert result.returncode == 0, result.stderr
    first = result.stdout.splitlines()[0]
    assert first.startswith("Baseline established: hybrid.jsonl NDCG@10 ")
    assert result.stdout.splitlines()[1] == (
        "Gate: headline-pooled — fail when NDCG@10 drops more than 2.5% over every dataset's "
        "shared queries pooled"
    )
    for name in ("hybrid.jsonl", "keyword.jsonl", "semantic.jsonl"):
        assert any(line.startswith(f"  {name} ") for line in result.stdout.splitlines())
    assert "Full report: retrieval-eval-report/report.md (--markdown prints it)" in (result.stdout)
    assert "|" not in result.stdout  # no Markdown table
    assert "\x1b[" not in result.stdout  # NO_COLOR
    assert "next: commit baseline.json" in result.stderr
    assert 'git add baseline.json && git commit -m "Record the retrieval baseline"' in (
        result.stderr
    )


def test_a_terminal_is_coloured_unless_no_color(project: Path) -> None:
    result = on_terminal("run", "--no-progress", cwd=project)
    assert result.returncode == 0, result.stderr
    assert "\x1b[" in result.stdout


@pytest.mark.slow
def test_markdown_prints_the_report_and_a_pipe_gets_it_as_before(project: Path) -> None:
    shown = on_terminal("run", "--no-progress", "--markdown", cwd=project)
    report_md = (project / "retrieval-eval-report" / "report.md").read_text()
    assert shown.stdout == report_md

    piped = retrieval_eval("run", "--no-progress", cwd=project)
    assert piped.stdout == (project / "retrieval-eval-report" / "report.md").read_text()
    assert "Full report:" not in piped.stdout


@pytest.mark.slow
def test_a_regression_names_the_worst_queries_on_the_terminal(project: Path) -> None:
    assert retrieval_eval("run", "--no-progress", cwd=project).returncode == 0
    blanked = _blank_the_keyword_answers(project, 3)

    result = on_terminal("run", "--no-progress", cwd=project, env={"NO_COLOR": "1"})

    assert result.returncode == 1
    first = result.stdout.splitlines()[0]
    # The default rule pools the datasets' NDCG@10, and names where it fell most.
    assert first.startswith("Regression: 3 datasets pooled (")
    assert ", most in keyword.jsonl NDCG@10 " in first
    keyword = next(line for line in result.stdout.splitlines() if "keyword.jsonl  " in line)
    assert "❌ regressed" in keyword  # where the pooled drop fell
    worst = result.stdout.split("Worst regressed queries:\n", 1)[1]
    lines = json.loads(
        "[" + ",".join((project / "datasets/keyword.jsonl").read_text().splitlines()) + "]"
    )
    lost = [
        f["query_id"]
        for f in lines
        if f["expected_top_k_ids"][:1] and f["expected_top_k_ids"][0] in blanked
    ]
    assert any(query_id in worst for query_id in lost)
    assert "first relevant rank 1 → " in worst


@pytest.mark.slow
def test_a_threshold_breach_prints_the_snippet_that_fixes_it(project: Path) -> None:
    config = project / "retrieval-eval.toml"
    config.write_text(CONFIG.replace("MRR_BOUND", '"mrr@10" = { min = 0.99 }'))

    breached = retrieval_eval("run", "--no-progress", cwd=project)

    assert breached.returncode == 1
    assert "Threshold breached: " in breached.stderr
    steps = breached.stderr.split("next: ", 1)[1]
    assert '  [dataset_thresholds."keyword.jsonl"]\n  "mrr@10" = { min = 0.' in steps
    snippet = "\n".join(line[2:] for line in steps.splitlines()[1:] if line.startswith("  "))
    config.write_text(config.read_text() + "\n" + snippet + "\n")
    fixed = retrieval_eval("run", "--no-progress", cwd=project)
    assert fixed.returncode == 0, fixed.stderr


def test_an_invalid_dataset_says_which_command_fixes_it(project: Path) -> None:
    target = project / "datasets" / "keyword.jsonl"
    lines = target.read_text().splitlines()
    target.write_text("\n".join(lines[:5]) + "\n")

    result = retrieval_eval("run", "--no-progress", cwd=project)

    assert result.returncode == 1
    assert "next: fix the lines above; `retrieval-eval validate`" in result.stderr
    assert "`retrieval-eval generate --append`" in result.stderr
    assert "`retrieval-eval review FILE`" in result.stderr


def test_a_baseline_measured_with_other_settings_names_each_one(project: Path) -> None:
    assert retrieval_eval("run", "--no-progress", cwd=project).returncode == 0
    config = project / "retrieval-eval.toml"
    # As a release that changes a default does: the setting moves without the file naming it.
    config.write_text(config.read_text() + '\n[retrievers.bm25]\nk1 = 1.2\nstopwords = "lucene"\n')

    done = retrieval_eval("run", "--no-progress", cwd=project)

    assert done.returncode in (0, 1), done.stderr
    report = (project / "retrieval-eval-report" / "report.md").read_text()
    changed = next(line for line in report.splitlines() if "Changed: " in line)
    assert "k1: 1.5 → 1.2" in changed
    assert "tokenizer.stopwords: english-179 → lucene-english-33" in changed
    assert "b: " not in changed  # only what differs
    data = json.loads((project / "retrieval-eval-report" / "report.json").read_text())
    changes = data["datasets"][0]["comparison"]["retriever_changes"]
    assert "k1: 1.5 → 1.2" in changes
