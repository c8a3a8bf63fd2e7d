"""`retrieval-eval run` and `baseline update` as a user runs them, in a real process."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from retrieval_eval.pipeline import run_evaluation
from tests.compare.conftest import Project, fixture, write_dataset

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
        == "error: retrieval-eval.toml: unknown key 'tolerence'; did you mean 'tolerance'?"
    )


@pytest.mark.slow
def test_dense_end_to_end(project: Project, tmp_path: Path) -> None:
    """The semantic dataset through the real ONNX model and chromadb, twice (cache warm)."""
    semantic = [
        fixture(f"sem-{n:02d}", text, [doc], retrieval_type="semantic")
        for n, (text, doc) in enumerate(
            [
                ("a citrus dessert with crust", "recipes/lemon-tart"),
                ("eggs cooked in tomato sauce", "recipes/shakshuka"),
                ("how much money a day in Portugal", "travel/lisbon"),
                ("autumn leaves at Japanese shrines", "travel/kyoto"),
                ("limiting how many requests clients may send", "software/rate-limit"),
                ("switching traffic between two environments to release", "software/deploy"),
            ],
            start=1,
        )
    ]
    write_dataset(project.datasets / "semantic.jsonl", semantic)
    hybrid = [
        {**f, "query_id": f["query_id"].replace("sem", "hyb"), "retrieval_type": "hybrid"}
        for f in semantic
    ]
    write_dataset(project.datasets / "hybrid.jsonl", hybrid)
    home = Path.home()  # the model installed by `retrieval-eval model install`
    settings = project.settings(
        model_dir=str(home / ".cache/chroma/onnx_models/all-MiniLM-L6-v2/onnx")
    )
    logged: list[str] = []
    first = run_evaluation(settings, progress=False, log=logged.append)
    assert first.verdict == "baseline-established", first.error
    # Indexed once per retriever: hybrid fuses the dense and bm25 indexes already built.
    indexing = [line.split(":")[0] for line in logged if " documents in " in line]
    # Before embedding, the estimate: every chunk is to embed on this first run.
    assert (
        sum(line.startswith("indexing for dense: embedding 12 documents (") for line in logged) == 1
    )
    assert indexing == ["indexing for dense", "indexing for bm25"]
    assert sum(line.startswith("indexing for dense: 12 documents in ") for line in logged) == 1
    assert first.report is not None
    semantic_report = next(d for d in first.report.datasets if d.name == "semantic.jsonl")
    assert semantic_report.retriever == "dense"
    assert semantic_report.aggregates["mrr@10"].value >= 0.8
    assert first.report.environment.model_sha256 is not None
    assert sum(d.embedded_texts or 0 for d in first.report.datasets) > 0

    second = run_evaluation(settings, progress=False, log=lambda _: None)
    assert second.verdict == "passed"
    assert second.report is not None
    # The corpus and the queries came from the embedding cache: nothing was embedded (a
    # query's latency counts the seconds recorded with its vector).
    counts = {d.name: (d.embedded_texts, d.cached_embeddings) for d in second.report.datasets}
    assert counts["keyword.jsonl"] == (None, None)  # bm25 embeds nothing
    assert counts["hybrid.jsonl"][0] == counts["semantic.jsonl"][0] == 0
    assert (counts["hybrid.jsonl"][1] or 0) >= 12  # at least one chunk per note, cached
