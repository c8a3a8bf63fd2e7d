"""The stages of one evaluation called in turn (pipeline.py), with the real ONNX model,
chromadb and SQLite: each retriever indexes once, the report and baseline are written last,
invalid datasets stop the run before anything is written."""

from __future__ import annotations

from pathlib import Path

import pytest

from retrieval_eval import pipeline
from retrieval_eval.pipeline import RunOutcome
from retrieval_eval.settings import RunSettings
from tests.compare.conftest import Project, fixture, write_dataset


@pytest.fixture
def project(tmp_path: Path) -> Project:
    return Project(tmp_path)


def run(settings: RunSettings, log: list[str] | None = None) -> RunOutcome:
    return pipeline.run(
        settings,
        interactive=False,
        notices=(),
        write=True,
        rewrite=False,
        log=(log.append if log is not None else lambda _: None),
        judge=None,
        rerank_key=None,
        links=None,
    )


def test_invalid_datasets_are_an_invalid_outcome_and_nothing_is_written(project: Project) -> None:
    path = project.datasets / "keyword.jsonl"
    path.write_text(path.read_text(encoding="utf-8") + '{"query_id": "kw-99"}\n', "utf-8")
    logged: list[str] = []
    outcome = run(project.settings(), logged)
    assert (outcome.verdict, int(outcome.exit_code), outcome.report) == ("invalid", 1, None)
    assert [(p.file.name, p.line) for p in outcome.problems][:1] == [("keyword.jsonl", 13)]
    assert outcome.status_description.startswith("invalid datasets: ")
    assert logged == []  # stopped before anything was indexed
    assert not project.baseline.exists()
    assert not project.report_dir.exists()


def test_a_run_writes_the_report_then_the_baseline_and_gates_the_next(project: Project) -> None:
    first = run(project.settings())
    assert first.verdict == "baseline-established"
    assert first.baseline_written
    assert first.report_json == project.report_dir / "report.json"
    assert first.report_json.is_file() and project.baseline.is_file()
    assert set(first.metrics) == {"keyword.jsonl"}
    second = run(project.settings())
    assert (second.verdict, second.baseline_written) == ("passed", False)
    measured = ("mrr@10", "ndcg@10", "p@5", "recall@10")  # latency apart, the same queries
    assert [second.metrics["keyword.jsonl"][m] for m in measured] == [
        first.metrics["keyword.jsonl"][m] for m in measured
    ]


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
    first = run(settings, logged)
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

    second = run(settings)
    assert second.verdict == "passed"
    assert second.report is not None
    # The corpus and the queries came from the embedding cache: nothing was embedded (a
    # query's latency counts the seconds recorded with its vector).
    counts = {d.name: (d.embedded_texts, d.cached_embeddings) for d in second.report.datasets}
    assert counts["keyword.jsonl"] == (None, None)  # bm25 embeds nothing
    assert counts["hybrid.jsonl"][0] == counts["semantic.jsonl"][0] == 0
    assert (counts["hybrid.jsonl"][1] or 0) >= 12  # at least one chunk per note, cached
