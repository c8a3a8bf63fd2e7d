"""The gate through the real pipeline: real notes, real BM25, real baseline.json files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from retrieval_eval.usecases.evaluate import run_evaluation
from retrieval_eval.vocabulary import ExitCode
from tests.compare.conftest import KEYWORD_FIXTURES, Project, fixture, write_dataset

DATASET = "keyword.jsonl"


def row(outcome: Any, metric: str) -> Any:
    assert outcome.report is not None
    (dataset,) = outcome.report.datasets
    return next(r for r in dataset.rows if r.metric == metric)


def set_baseline_drop(project: Project, metric: str, drop: float) -> tuple[float, float]:
    """Raise the recorded per-query values so that today's run is ``drop`` below them.

    Returns (baseline mean, current mean) on the shared queries.
    """
    data = project.baseline_data()
    queries = data["datasets"][DATASET]["queries"]
    values = {qid: q["metrics"][metric] for qid, q in queries.items() if metric in q["metrics"]}
    current = sum(values.values()) / len(values)
    target = current / (1 - drop)
    missing = (target - current) * len(values)
    for qid in sorted(values, key=lambda q: values[q]):
        raise_by = min(1.0 - values[qid], missing)
        queries[qid]["metrics"][metric] = values[qid] + raise_by
        missing -= raise_by
    assert missing < 1e-12, "not enough headroom in the fixtures for this drop"
    data["datasets"][DATASET]["aggregates"][metric] = target
    project.write_baseline_data(data)
    return target, current


def test_first_run_without_a_baseline_establishes_it(project: Project) -> None:
    outcome = project.run()
    assert outcome.verdict == "baseline-established"
    assert outcome.exit_code == ExitCode.OK
    assert outcome.baseline_written
    data = project.baseline_data()
    assert data["schema_version"] == 1
    entry = data["datasets"][DATASET]
    assert entry["retriever"] == "bm25"
    assert entry["k"] == 10
    assert set(entry["queries"]) == {f["query_id"] for f in KEYWORD_FIXTURES}
    assert set(entry["aggregates"]) == {
        "mrr@10",
        "ndcg@10",
        "p@5",
        "recall@10",
        "groundedness",
        "latency_p95_ms",
        "cost_per_query_usd",
    }
    assert len(entry["dataset_fingerprint"]) == len(entry["corpus_fingerprint"]) == 64
    assert set(data["environment"]) == {
        "platform",
        "python",
        "retrieval_eval",
        "chromadb",
        "onnxruntime",
        "model_sha256",
        "dense_model",
        "git_commit",
    }
    mrr = outcome.report.datasets[0].aggregates["mrr@10"].value  # type: ignore[union-attr]
    assert entry["aggregates"]["mrr@10"] == round(mrr, 12)
    ndcg = data["datasets"][DATASET]["aggregates"]["ndcg@10"]
    assert outcome.status_description == f"Baseline established: {DATASET} NDCG@10 {ndcg:.3f}"
    markdown = (project.report_dir / "report.md").read_text(encoding="utf-8")
    assert (
        markdown.splitlines()[0] == f"📌 **Baseline established: keyword.jsonl NDCG@10 {ndcg:.3f}**"
    )
    report = json.loads((project.report_dir / "report.json").read_text(encoding="utf-8"))
    assert report["verdict"] == "baseline-established"


def test_null_values_establish_the_baseline(project: Project) -> None:
    project.write_baseline_data(
        {"schema_version": 1, "datasets": {DATASET: {"aggregates": {"mrr@10": None}}}}
    )
    outcome = project.run()
    assert (outcome.verdict, outcome.exit_code) == ("baseline-established", ExitCode.OK)
    assert project.baseline_data()["datasets"][DATASET]["aggregates"]["mrr@10"] is not None


def test_unchanged_second_run_passes_and_leaves_the_baseline_alone(project: Project) -> None:
    project.run()
    before = project.baseline.read_bytes()
    outcome = project.run()
    assert (outcome.verdict, outcome.exit_code) == ("passed", ExitCode.OK)
    assert outcome.status_description == "Passed: no gated metric dropped (1 dataset)"
    assert not outcome.baseline_written
    assert project.baseline.read_bytes() == before
    assert row(outcome, "mrr@10").status == "ok"
    assert row(outcome, "mrr@10").delta == 0.0


def test_a_4_9_percent_drop_passes(project: Project) -> None:
    project.run()
    before, current = set_baseline_drop(project, "mrr@10", 0.049)
    outcome = project.run()
    assert (outcome.verdict, outcome.exit_code) == ("passed", ExitCode.OK)
    mrr = row(outcome, "mrr@10")
    assert mrr.status == "ok"
    assert round(mrr.delta_pct, 6) == -4.9
    assert outcome.status_description == (
        f"Passed: largest drop {DATASET} MRR@10 {before:.3f} → {current:.3f} (−4.9%), within 5%"
    )


def test_a_5_1_percent_drop_fails(project: Project) -> None:
    project.run()
    before, current = set_baseline_drop(project, "mrr@10", 0.051)
    baseline_bytes = project.baseline.read_bytes()
    outcome = project.run()
    assert (outcome.verdict, outcome.exit_code) == ("regression", ExitCode.FAILED)
    assert row(outcome, "mrr@10").status == "regressed"
    assert row(outcome, "ndcg@10").status == "ok"
    assert outcome.status_description == (
        f"Regression: {DATASET} MRR@10 {before:.3f} → {current:.3f} (−5.1%) (tolerance 5%)"
    )
    assert project.baseline.read_bytes() == baseline_bytes  # a failing run never moves it
    markdown = (project.report_dir / "report.md").read_text(encoding="utf-8")
    assert markdown.startswith("❌ **Regression: keyword.jsonl MRR@10")


def test_exactly_the_tolerance_is_not_a_regression(project: Project) -> None:
    project.run()
    set_baseline_drop(project, "ndcg@10", 0.05)
    outcome = project.run()
    assert outcome.verdict == "passed"


def test_a_threshold_breach_fails(project: Project) -> None:
    project.run()
    outcome = project.run(thresholds={"ndcg@10": {"min": 0.99}})
    assert (outcome.verdict, outcome.exit_code) == ("threshold", ExitCode.FAILED)
    ndcg = row(outcome, "ndcg@10")
    assert (ndcg.status, ndcg.threshold) == ("below-threshold", "≥ 0.99")
    assert outcome.status_description == (
        f"Threshold breached: {DATASET} NDCG@10 {ndcg.current:.3f} (threshold ≥ 0.99)"
    )


def test_a_latency_ceiling_breach_fails(project: Project) -> None:
    outcome = project.run(thresholds={"latency_p95_ms": {"max": 0.0}})
    assert (outcome.verdict, outcome.exit_code) == ("threshold", ExitCode.FAILED)
    assert row(outcome, "latency_p95_ms").status == "above-ceiling"


def test_a_minimum_mrr_breach_fails(project: Project) -> None:
    fixtures = [
        *KEYWORD_FIXTURES,
        fixture("kw-13", "Lisbon trams", ["books/deep-work"], minimum_mrr=0.5),
    ]
    write_dataset(project.datasets / DATASET, fixtures)
    outcome = project.run()
    assert (outcome.verdict, outcome.exit_code) == ("threshold", ExitCode.FAILED)
    assert outcome.report is not None
    (failure,) = outcome.report.datasets[0].failures
    assert (failure.query_id, failure.line, failure.kind) == ("kw-13", 13, "minimum_mrr")
    assert failure.message == (
        "MRR 0.000 is below its minimum_mrr 0.5 (no relevant document in the results)"
    )
    assert outcome.status_description == (
        f"Threshold breached: {DATASET} kw-13: MRR 0.000 is below its minimum_mrr 0.5 "
        "(no relevant document in the results)"
    )


def test_an_expect_empty_fixture_with_results_fails(project: Project) -> None:
    fixtures = [*KEYWORD_FIXTURES, fixture("kw-13", "shakshuka", [], expect_empty=True)]
    write_dataset(project.datasets / DATASET, fixtures)
    outcome = project.run()
    assert (outcome.verdict, outcome.exit_code) == ("threshold", ExitCode.FAILED)
    assert outcome.report is not None
    (failure,) = outcome.report.datasets[0].failures
    assert failure.kind == "expect_empty"
    assert failure.message == "expected no results, got 1 (recipes/shakshuka)"


def test_an_expect_empty_fixture_that_stays_empty_passes_and_is_not_averaged(
    project: Project,
) -> None:
    outcome = project.run()
    assert outcome.report is not None
    dataset = outcome.report.datasets[0]
    assert dataset.failures == ()
    assert (dataset.num_queries, dataset.num_scored) == (12, 11)
    assert dataset.aggregates["mrr@10"].n == 11


def test_a_changed_dataset_is_reported_plainly(project: Project) -> None:
    project.run()
    fixtures = [f for f in KEYWORD_FIXTURES if f["query_id"] != "kw-09"]
    fixtures.append(fixture("kw-13", "Iceland glaciers waterfalls", ["travel/iceland"]))
    write_dataset(project.datasets / DATASET, fixtures)
    outcome = project.run()
    assert outcome.verdict == "passed"
    assert outcome.report is not None
    comparison = outcome.report.datasets[0].comparison
    assert comparison is not None
    assert (comparison.added, comparison.removed) == (("kw-13",), ("kw-09",))
    assert comparison.dataset_changed and not comparison.corpus_changed
    assert comparison.common_queries == 11
    markdown = (project.report_dir / "report.md").read_text(encoding="utf-8")
    assert (
        "⚠️ **The dataset changed since the baseline** (1 added, 1 removed, 11 compared)."
        in markdown
    )
    assert "| removed | kw-09 | habits cues rewards |" in markdown


def test_a_changed_corpus_is_reported_plainly(project: Project) -> None:
    project.run()
    (project.corpus / "books" / "stoicism.md").write_text("# Stoicism\n\nControl what you can.\n")
    outcome = project.run()
    assert outcome.report is not None
    comparison = outcome.report.datasets[0].comparison
    assert comparison is not None and comparison.corpus_changed
    markdown = (project.report_dir / "report.md").read_text(encoding="utf-8")
    assert "⚠️ **The corpus changed since the baseline**" in markdown


def test_a_corrupt_baseline_is_an_error_and_stays_untouched(project: Project) -> None:
    project.baseline.write_text('{"datasets": {"keyword.jsonl": ', encoding="utf-8")
    before = project.baseline.read_bytes()
    outcome = project.run()
    assert (outcome.verdict, outcome.exit_code) == ("error", ExitCode.ERROR)
    assert str(outcome.error) == (
        f"{project.baseline}:1: the baseline is not valid JSON (Expecting value, column 32); "
        "fix it, or delete it to establish a new baseline"
    )
    assert project.baseline.read_bytes() == before
    assert not project.report_dir.exists()


def test_invalid_datasets_stop_before_anything_is_evaluated(project: Project) -> None:
    broken = [*KEYWORD_FIXTURES, {"query_id": "kw-13", "query": "x"}]
    write_dataset(project.datasets / DATASET, broken)
    outcome = project.run()
    assert (outcome.verdict, outcome.exit_code) == ("invalid", ExitCode.FAILED)
    assert outcome.report is None and not project.report_dir.exists()
    assert not project.baseline.exists()
    assert str(outcome.problems[0]).startswith(f"{project.datasets / DATASET}:13: ")


def test_the_like_baseline_retriever_runs_through_the_same_gate(project: Project) -> None:
    outcome = project.run(dataset_retrievers={DATASET: "like"})
    assert outcome.verdict == "baseline-established"
    assert project.baseline_data()["datasets"][DATASET]["retriever"] == "like"
    again = project.run(dataset_retrievers={DATASET: "like"})
    assert again.verdict == "passed"


def test_switching_retriever_is_flagged(project: Project, tmp_path: Path) -> None:
    project.run()
    outcome = project.run(dataset_retrievers={DATASET: "like"})
    assert outcome.report is not None
    comparison = outcome.report.datasets[0].comparison
    assert comparison is not None and comparison.retriever_changed


def test_latency_is_gated_relatively_only_when_asked(project: Project) -> None:
    project.run()
    data = project.baseline_data()
    data["datasets"][DATASET]["aggregates"]["latency_p95_ms"] = 1e-6  # impossibly fast
    project.write_baseline_data(data)
    by_default = project.run()
    assert by_default.verdict == "passed"
    assert row(by_default, "latency_p95_ms").status == "ok"  # within its 500 ms ceiling
    opted_in = project.run(gated=["mrr@10", "latency_p95_ms"])
    assert (opted_in.verdict, opted_in.exit_code) == ("regression", ExitCode.FAILED)
    assert row(opted_in, "latency_p95_ms").status == "regressed"
    assert row(opted_in, "recall@10").status == "not-gated"


def test_baseline_is_not_written_when_the_caller_says_so(project: Project) -> None:
    outcome = run_evaluation(
        project.settings(), progress=False, write_baseline=False, log=lambda _: None
    )
    assert (outcome.verdict, outcome.exit_code) == ("baseline-established", ExitCode.OK)
    assert not outcome.baseline_written and not project.baseline.exists()
    markdown = (project.report_dir / "report.md").read_text(encoding="utf-8")
    assert "the baseline was not written by this run" in markdown


def test_baseline_update_replaces_every_entry(project: Project) -> None:
    project.run()
    set_baseline_drop(project, "mrr@10", 0.08)
    assert project.run().verdict == "regression"
    outcome = run_evaluation(
        project.settings(), progress=False, rewrite_baseline=True, log=lambda _: None
    )
    assert outcome.baseline_written
    assert project.run().verdict == "passed"


def test_written_files_validate_against_the_published_schemas(
    project: Project, repo_root: Path
) -> None:
    """What users script against is what schema/ promises (jsonschema is a chromadb dependency)."""
    import jsonschema

    project.run()
    project.run()
    pairs = [
        ("report.schema.json", project.report_dir / "report.json"),
        ("baseline.schema.json", project.baseline),
    ]
    for schema_name, path in pairs:
        schema = json.loads((repo_root / "schema" / schema_name).read_text(encoding="utf-8"))
        jsonschema.validate(json.loads(path.read_text(encoding="utf-8")), schema)


def test_hostile_query_text_from_a_dataset_is_inert_in_the_report(project: Project) -> None:
    from tests.render.github_html import read, table_with_header, to_html

    hostile = "lemon | `tart` <script>alert(1)</script> @here **now**"
    project.run()
    fixtures = [*KEYWORD_FIXTURES, fixture("kw|13", hostile, ["recipes/lemon-tart"])]
    write_dataset(project.datasets / DATASET, fixtures)
    project.run()
    markdown = (project.report_dir / "report.md").read_text(encoding="utf-8")
    assert "<script>" not in to_html(markdown)
    rows = table_with_header(read(markdown), "Change")
    assert rows[1] == ["new", "kw|13", hostile.replace("@here", "@\u200bhere")]


def test_a_retriever_failure_is_an_error_and_writes_nothing(
    project: Project, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    plugin = tmp_path / "plugins"
    plugin.mkdir()
    (plugin / "crashing_retriever.py").write_text(
        "class Crashing:\n"
        "    name = 'crashing'\n"
        "    def index(self, corpus): pass\n"
        "    def search(self, query, k, tags=()):\n"
        "        raise RuntimeError('search server unreachable')\n"
        "    def describe(self): return {}\n"
        "def make(): return Crashing()\n",
        encoding="utf-8",
    )
    monkeypatch.setenv("PYTHONPATH", str(plugin))  # the factory runs in a child process
    outcome = project.run(
        dataset_retrievers={DATASET: "custom"},
        retrievers={"custom": {"python": "crashing_retriever:make"}},
    )
    assert (outcome.verdict, outcome.exit_code) == ("error", ExitCode.ERROR)
    assert str(outcome.error) == (
        "custom retriever crashing_retriever:make: search() raised RuntimeError: "
        "search server unreachable"
    )
    assert not project.baseline.exists() and not project.report_dir.exists()
