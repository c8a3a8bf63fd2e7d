"""`retrieval-eval run` with challengers, as a person at a terminal and a script see it: one
summary line per challenger and dataset; report.md's section; the same exit code."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.commands.test_run import CONFIG
from tests.support.action import run_cli
from tests.support.terminal import on_terminal

pytestmark = pytest.mark.slow

CHALLENGERS = """
[challengers.like-words]
retriever = "like"
datasets = ["keyword.jsonl"]

[challengers.stemmed]
retriever = "bm25"

[challengers.stemmed.bm25]
stemming = true

[challengers.nowhere]
retriever = "http"
datasets = ["hybrid.jsonl"]

[challengers.nowhere.http]
url = "http://127.0.0.1:9/search"
"""


@pytest.fixture
def project(tmp_path: Path, repo_root: Path) -> Path:
    shutil.copytree(repo_root / "datasets", tmp_path / "datasets")
    (tmp_path / "retrieval-eval.toml").write_text(
        CONFIG.replace("MRR_BOUND", '"mrr@10" = false') + CHALLENGERS
    )
    return tmp_path


def test_the_terminal_summary_lists_each_challenger(project: Path) -> None:
    result = on_terminal("run", "--no-progress", cwd=project, env={"NO_COLOR": "1"})

    assert result.returncode == 0, result.stderr  # the unreachable challenger changes nothing
    lines = result.stdout.splitlines()
    start = lines.index("Challengers (reported, never gated):")
    listed = [line.strip() for line in lines[start + 1 :] if line.startswith("  ")]
    assert [line.split()[:2] for line in listed[:5]] == [
        ["hybrid.jsonl", "stemmed"],
        ["hybrid.jsonl", "nowhere"],
        ["keyword.jsonl", "like-words"],
        ["keyword.jsonl", "stemmed"],
        ["semantic.jsonl", "stemmed"],
    ]
    assert "MRR@10" in listed[0] and "vs bm25, p " in listed[0] and "W/T/L " in listed[0]
    assert "warning: retrievers.http.url: cannot connect to 127.0.0.1:9" in listed[1]
    assert "warning: challenger nowhere on hybrid.jsonl:" in result.stderr


def test_report_md_has_one_section_per_dataset(project: Path) -> None:
    run = run_cli(project, "run", "--no-progress")
    assert run.returncode == 0, run.log
    markdown = (project / "retrieval-eval-report" / "report.md").read_text(encoding="utf-8")
    assert run.stdout == markdown  # a pipe gets report.md's text
    for dataset in ("hybrid.jsonl", "keyword.jsonl", "semantic.jsonl"):
        assert f"Challengers on {dataset}" in markdown
    keyword = markdown.split("Challengers on keyword.jsonl", 1)[1].split("</details>", 1)[0]
    assert "| **bm25** (gated) | bm25 |" in keyword
    assert "| like-words | like |" in keyword and "| stemmed | bm25 |" in keyword
    assert "| nowhere |" not in keyword  # limited to hybrid.jsonl
    assert "Holm-corrected across 2 challengers" in keyword
