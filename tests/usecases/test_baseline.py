"""`retrieval-eval baseline update` (usecases/baseline.py) as a user runs it, in a real
process: it replaces the baseline whatever the verdict, and only invalid datasets or an
error stop it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.compare.conftest import Project
from tests.support.action import run_cli
from tests.support.blocking import left_waiting, never_answering
from tests.usecases.test_evaluate import cli


@pytest.fixture
def project(tmp_path: Path) -> Project:
    return Project(tmp_path)


@pytest.mark.slow  # three processes
def test_corrupt_baseline_exits_2_and_update_rewrites_it(project: Project) -> None:
    project.baseline.write_text("not json", encoding="utf-8")
    result = cli(project, "run")
    assert result.returncode == 2
    assert (
        "error: baseline.json:1: the baseline is not valid JSON (Expecting value, "
        "column 1); fix it, or delete it to establish a new baseline" in result.stderr
    )
    assert project.baseline.read_text(encoding="utf-8") == "not json"

    update = cli(project, "baseline", "update")
    assert update.returncode == 0, update.stderr
    assert "baseline rewritten: " in update.stderr
    assert json.loads(project.baseline.read_text(encoding="utf-8"))["schema_version"] == 1
    assert cli(project, "run", "--quiet").returncode == 0


def test_update_replaces_a_baseline_the_run_regresses_against(project: Project) -> None:
    assert cli(project, "run", "--quiet").returncode == 0
    data = project.baseline_data()
    for query in data["datasets"]["keyword.jsonl"]["queries"].values():
        if "ndcg@10" in query["metrics"]:
            query["metrics"]["ndcg@10"] = 1.0  # a baseline this run cannot reach
    project.write_baseline_data(data)
    assert cli(project, "run", "--quiet").returncode == 1

    update = cli(project, "baseline", "update")
    assert update.returncode == 0, update.stderr
    assert update.stdout == ""  # the report is written, not printed
    assert update.stderr.splitlines()[-1] == f"baseline rewritten: {project.baseline}"
    rewritten = project.baseline_data()["datasets"]["keyword.jsonl"]["queries"]
    assert any(q["metrics"].get("ndcg@10", 1.0) < 1.0 for q in rewritten.values())
    assert cli(project, "run", "--quiet").returncode == 0


def test_invalid_datasets_stop_the_update_and_leave_the_baseline(project: Project) -> None:
    assert cli(project, "run", "--quiet").returncode == 0
    before = project.baseline.read_bytes()
    path = project.datasets / "keyword.jsonl"
    path.write_text(path.read_text(encoding="utf-8") + '{"query_id": "kw-99"}\n', "utf-8")
    update = cli(project, "baseline", "update")
    assert update.returncode == 1
    assert update.stderr.splitlines()[0].startswith("datasets/keyword.jsonl:13: ")
    assert "baseline rewritten" not in update.stderr
    assert project.baseline.read_bytes() == before


def test_an_update_past_the_time_limit_exits_2_and_leaves_the_baseline(project: Project) -> None:
    """A retriever that never answers cannot hold `baseline update`: `time_limit_s` ends it
    with exit 2 and the message `run` gives, and the old baseline stays as it was."""
    assert cli(project, "run", "--quiet").returncode == 0
    before = project.baseline.read_bytes()
    fifo = never_answering(project.root, time_limit_s=2)

    update = run_cli(project.root, "baseline", "update")
    assert update.returncode == 2, update.log
    assert (
        "error: the evaluation took longer than time_limit_s (2 s) and was stopped in the "
        "step 'indexing for custom'; make that step faster, or raise time_limit_s in the "
        "configuration" in update.stderr
    )
    assert "baseline rewritten" not in update.stderr
    assert project.baseline.read_bytes() == before
    assert not left_waiting(fifo)
