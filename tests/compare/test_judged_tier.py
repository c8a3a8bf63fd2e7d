"""The judged tier through `retrieval-eval run`: scored with trec_eval's conventions from the
current judgments (a document nobody judged, or judged for another model, prompt or text,
is not relevant; a query with no relevant document scores 0 and is averaged in), judged@k,
its own section of report.json beside the datasets, and the reasons it does not gate (no
key, the budget). A run-file retriever whose hits are written by hand, so every number
below is worked out from the lines of the run file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from retrieval_eval.compare.judged_tier import judge_reranks
from retrieval_eval.load.corpus import load_corpus
from retrieval_eval.load.judgments import text_sha256
from retrieval_eval.score.label_judge import LABEL_PROMPT_SHA256
from retrieval_eval.settings import JudgeSettings
from tests.compare.conftest import Project
from tests.compare.test_labels import BASELINE_RUN, CONFIG, write_run
from tests.support.action import run_cli
from tests.support.fake_anthropic import FakeAnthropic

KEY = "sk-ant-test-judged-tier-cli-1201"
MODEL = JudgeSettings().model
TIER = {
    "j-01": "a tart with lemon curd",
    "j-02": "what to eat for breakfast",
    "j-03": "cheap trams in Portugal",
}
# j-01: an unjudged document first, the relevant one second (MRR 1/2). j-02: one document
# judged not relevant, one judged relevant for another model (stale): nothing relevant,
# scored 0. j-03: its relevant document first (MRR 1).
TIER_RUN = {
    "j-01": ["books/deep-work", "recipes/lemon-tart"],
    "j-02": ["recipes/lemon-chicken", "recipes/shakshuka"],
    "j-03": ["travel/lisbon", "travel/kyoto"],
}
TIER_CONFIG = (
    CONFIG.replace(
        '"keyword.jsonl" = "run-file"\n',
        '"keyword.jsonl" = "run-file"\n"queries.jsonl" = "run-file"\n',
    )
    + "\n[judged]\nenabled = true\n"
)


def _judgment(project: Project, query_id: str, doc_id: str, grade: int, model: str = MODEL) -> str:
    corpus = load_corpus(project.corpus)
    text = next(d.text for d in corpus.documents if d.id == doc_id)
    return json.dumps(
        {
            "query_id": query_id,
            "doc_id": doc_id,
            "grade": grade,
            "judge_model": model,
            "prompt_sha256": LABEL_PROMPT_SHA256,
            "doc_sha256": text_sha256(text),
        }
    )


@pytest.fixture
def tier_project(tmp_path: Path) -> Project:
    project = Project(tmp_path)
    (tmp_path / "retrieval-eval.toml").write_text(TIER_CONFIG, encoding="utf-8")
    write_run(tmp_path, {**BASELINE_RUN, **TIER_RUN})
    judged = project.datasets / "judged"
    judged.mkdir()
    (judged / "queries.jsonl").write_text(
        "".join(json.dumps({"query_id": q, "query": text}) + "\n" for q, text in TIER.items()),
        encoding="utf-8",
    )
    lines = [
        _judgment(project, "j-01", "recipes/lemon-tart", 2),
        _judgment(project, "j-02", "recipes/lemon-chicken", 0),
        _judgment(project, "j-02", "recipes/shakshuka", 1, model="claude-another-model"),
        _judgment(project, "j-03", "travel/lisbon", 1),
        _judgment(project, "j-03", "travel/kyoto", 0),
    ]
    (judged / "judgments.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return project


def _report(project: Project) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((project.report_dir / "report.json").read_text())
    return data


def test_the_tier_is_scored_from_current_judgments_beside_the_datasets(
    tier_project: Project,
) -> None:
    done = run_cli(tier_project.root, "run")  # no key: nothing is judged on the fly
    assert done.returncode == 0, done.log
    report = _report(tier_project)
    assert [d["name"] for d in report["datasets"]] == ["keyword.jsonl"]  # never mixed in
    tier = report["judged_tier"]
    per_query = {q["query_id"]: q["metrics"]["mrr@10"] for q in tier["report"]["queries"]}
    assert per_query == {"j-01": 0.5, "j-02": 0.0, "j-03": 1.0}
    assert tier["report"]["aggregates"]["mrr@10"]["value"] == pytest.approx(0.5)
    # Six results in the top k; the unjudged one and the stale one have no current judgment.
    assert (tier["results_at_k"], tier["judged_at_k"]) == (6, pytest.approx(4 / 6))
    assert (tier["gates"], tier["not_gating"], tier["judged_on_the_fly"]) == (False, "no-key", 0)
    # The baseline records the tier's numbers for later runs to compare against.
    entry = tier_project.baseline_data()["judged_tier"]
    assert entry["aggregates"]["mrr@10"] == pytest.approx(0.5)
    assert set(entry["queries"]) == set(TIER)
    markdown = (tier_project.report_dir / "report.md").read_text(encoding="utf-8")
    assert "Judged tier · queries.jsonl" in markdown
    assert "judged@10: 67% of the 6 results" in markdown
    assert "Judged tier · queries.jsonl" in done.stdout  # printed when not on a terminal


def test_a_budget_that_runs_out_keeps_the_tier_out_of_the_verdict(tier_project: Project) -> None:
    def judge(body: dict[str, Any]) -> tuple[int, str]:
        return 200, json.dumps({"score": 0.9})

    with FakeAnthropic(api_key=KEY, responder=judge) as fake:
        config = TIER_CONFIG + f'\n[judge]\nbase_url = "{fake.base_url}"\nmax_cost_usd = 0.0\n'
        (tier_project.root / "retrieval-eval.toml").write_text(config, encoding="utf-8")
        done = run_cli(tier_project.root, "run", env={"ANTHROPIC_API_KEY": KEY})
        assert done.returncode == 0, done.log
        assert fake.requests == []  # no call could fit a budget of $0
    tier = _report(tier_project)["judged_tier"]
    assert (tier["gates"], tier["not_gating"], tier["judged_on_the_fly"]) == (False, "budget", 0)
    assert "judging the new documents stopped" in done.log
    markdown = (tier_project.report_dir / "report.md").read_text(encoding="utf-8")
    assert "Not gated: the judge's budget (\\[judge\\] max\\_cost\\_usd) ran out" in markdown


def test_the_agreement_is_reused_for_the_same_judge_and_measured_again_for_another(
    tier_project: Project,
) -> None:
    def judge(body: dict[str, Any]) -> tuple[int, str]:
        return 200, json.dumps({"score": 0.9 if "lemon-tart" in str(body) else 0.1})

    with FakeAnthropic(api_key=KEY, responder=judge) as fake:

        def run(model: str) -> dict[str, Any]:
            config = TIER_CONFIG + f'\n[judge]\nbase_url = "{fake.base_url}"\nmodel = "{model}"\n'
            (tier_project.root / "retrieval-eval.toml").write_text(config, encoding="utf-8")
            done = run_cli(tier_project.root, "run", env={"ANTHROPIC_API_KEY": KEY})
            assert done.returncode == 0, done.log
            tier: dict[str, Any] = _report(tier_project)["judged_tier"]
            return tier

        first = run(MODEL)
        assert first["agreement"]["source"] == "measured" and first["agreement"]["sample_size"] > 0
        recorded = tier_project.baseline_data()["judge_agreement"]
        assert (recorded["model"], recorded["prompt_sha256"]) == (MODEL, LABEL_PROMPT_SHA256)
        # The unjudged and the stale pair were judged on the fly and written (`run` may write).
        assert (first["judged_on_the_fly"], first["judgments_written"]) == (2, True)
        asked = len(fake.requests)

        again = run(MODEL)  # the same judge: the record is reused, nothing is asked
        assert again["agreement"]["source"] == "recorded"
        assert (again["judged_on_the_fly"], len(fake.requests)) == (0, asked)

        other = run("claude-other-judge")  # another model: measured again, judged again
        assert other["agreement"]["source"] == "measured"
        assert other["agreement"]["model"] == "claude-other-judge"
        assert {r.body["model"] for r in fake.requests[asked:]} == {"claude-other-judge"}
        assert other["judged_on_the_fly"] == 6  # every judgment was the old model's
    assert tier_project.baseline_data()["judge_agreement"]["model"] == "claude-other-judge"


def test_baseline_update_records_the_tier_anew(tier_project: Project) -> None:
    assert run_cli(tier_project.root, "run").returncode == 0
    data = tier_project.baseline_data()
    data["judged_tier"]["aggregates"]["mrr@10"] = 0.25  # an old value, replaced below
    tier_project.write_baseline_data(data)
    done = run_cli(tier_project.root, "baseline", "update")
    assert done.returncode == 0, done.log
    entry = tier_project.baseline_data()["judged_tier"]
    assert entry["aggregates"]["mrr@10"] == pytest.approx(0.5)


def test_the_judge_is_the_reranker_only_for_the_claude_reranked_hybrid(
    tier_project: Project,
) -> None:
    plain = tier_project.settings()
    assert not judge_reranks(plain, "hybrid") and not judge_reranks(plain, "run-file")
    claude = tier_project.settings(retrievers={"hybrid": {"reranker": "claude"}})
    assert judge_reranks(claude, "hybrid") and not judge_reranks(claude, "bm25")
