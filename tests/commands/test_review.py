"""`retrieval-eval review` on a terminal honours NO_COLOR (no-color.org)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.author.cli import retrieval_eval
from tests.author.fake_writer import writer
from tests.support.fake_anthropic import FakeAnthropic
from tests.support.terminal import on_terminal


@pytest.mark.slow
def test_the_review_prompt_is_bold_unless_no_color(tmp_path: Path, repo_root: Path) -> None:
    shutil.copytree(repo_root / "datasets" / "corpus", tmp_path / "notes")
    (tmp_path / "retrieval-eval.toml").write_text('corpus = "notes"\n')
    with FakeAnthropic(responder=writer()) as fake:
        made = retrieval_eval(
            "generate", "--types", "keyword", "--per-file", "2", "--check-with", "bm25",
            cwd=tmp_path,
            env={"ANTHROPIC_API_KEY": fake.api_key, "ANTHROPIC_BASE_URL": fake.base_url},
        )  # fmt: skip
    assert made.returncode == 0, made.stderr

    plain = on_terminal("review", "datasets/keyword.jsonl", cwd=tmp_path, env={"NO_COLOR": "1"})
    coloured = on_terminal("review", "datasets/keyword.jsonl", cwd=tmp_path)

    assert plain.returncode == coloured.returncode == 0, plain.stderr + coloured.stderr
    assert " > " in plain.stdout and "\x1b[" not in plain.stdout
    assert "\x1b[1m" in coloured.stdout


def test_a_dataset_and_holes_together_are_a_usage_error(tmp_path: Path) -> None:
    (tmp_path / "keyword.jsonl").write_text("")
    (tmp_path / "report.json").write_text("{}")
    done = retrieval_eval("review", "keyword.jsonl", "--holes", "report.json", cwd=tmp_path)
    assert done.returncode == 2
    assert "give a DATASET or --holes REPORT, not both" in done.stderr
