"""One evaluation (usecases/evaluate.py): `retrieval-eval run` as a user runs it, in a real
process."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.compare.conftest import Project

CLI = [str(Path(sys.executable).with_name("retrieval-eval"))]


def cli(project: Project, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*CLI, *args],
        cwd=project.root,
        capture_output=True,
        text=True,
        check=False,
        env={"PATH": "/usr/bin:/bin", "HOME": str(project.root), "CI": "true"},
    )


@pytest.fixture
def project(tmp_path: Path) -> Project:
    return Project(tmp_path)


def test_run_prints_the_report_and_exits_by_verdict(project: Project) -> None:
    first = cli(project, "run")
    assert first.returncode == 0, first.stderr
    assert first.stdout.startswith("📌 **Baseline established: keyword.jsonl NDCG@10 ")
    assert (project.root / "baseline.json").is_file()
    # CI logs get quiet, line-oriented progress: no carriage-return redraws.
    assert "\r" not in first.stderr
    assert "keyword.jsonl: searching with bm25: 12 queries in " in first.stderr

    second = cli(project, "run", "--quiet")
    assert second.returncode == 0, second.stderr
    assert second.stdout == ""
    assert second.stderr.splitlines()[-1] == "Passed: no gated metric dropped (1 dataset)"


def test_run_exits_1_on_a_regression(project: Project) -> None:
    cli(project, "run")
    data = project.baseline_data()
    for query in data["datasets"]["keyword.jsonl"]["queries"].values():
        if "ndcg@10" in query["metrics"]:
            query["metrics"]["ndcg@10"] = 1.0
    project.write_baseline_data(data)
    result = cli(project, "run", "--quiet")
    assert result.returncode == 1
    assert result.stderr.splitlines()[-1].startswith("Regression: keyword.jsonl NDCG@10 1.000 → ")


def test_invalid_datasets_exit_1_with_the_validators_messages(project: Project) -> None:
    path = project.datasets / "keyword.jsonl"
    path.write_text(path.read_text(encoding="utf-8") + '{"query_id": "kw-99"}\n', "utf-8")
    result = cli(project, "run")
    assert result.returncode == 1
    assert result.stderr.splitlines()[0].startswith("datasets/keyword.jsonl:13: ")
    assert not project.baseline.exists()
    assert not project.report_dir.exists()


def test_bad_config_exits_2_naming_key_and_file(project: Project) -> None:
    (project.root / "retrieval-eval.toml").write_text("tolerence = 0.1\n", encoding="utf-8")
    result = cli(project, "run")
    assert result.returncode == 2
    assert (
        result.stderr.strip()
        == "error: retrieval-eval.toml:1: unknown key 'tolerence'; did you mean 'tolerance'?"
    )


def test_an_enabled_judge_without_its_key_exits_2_and_writes_nothing(project: Project) -> None:
    """The key comes from the environment alone; the run stops before anything is indexed."""
    result = cli(project, "run", "--judge")
    assert result.returncode == 2
    assert result.stderr.startswith(
        "error: the LLM judge is enabled but ANTHROPIC_API_KEY is not set: set the "
        "ANTHROPIC_API_KEY environment variable, or turn the judge off"
    )
    assert "searching" not in result.stderr
    assert not project.baseline.exists()
    assert not project.report_dir.exists()
