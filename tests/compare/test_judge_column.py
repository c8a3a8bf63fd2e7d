"""The LLM judge wired into `retrieval-eval run`: real pipeline, real anthropic client,
a real HTTP server on 127.0.0.1 standing in for the Messages API."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr

from retrieval_eval.cli import main
from retrieval_eval.compare.judge_column import DROPPED_NOTE
from retrieval_eval.errors import ConfigError
from retrieval_eval.usecases.evaluate import run_evaluation
from tests.compare.conftest import CONFIG, Project
from tests.support.fake_anthropic import FakeAnthropic

KEY = "sk-ant-test-secret-4711"
# "lemon" queries get half marks, the rest full: mean over the 11 judged queries = 10/11.
HALF = {"lemon tart pastry", "lemon"}
# The fake reports 1200 input and 8 output tokens per call, at $1 / $5 per million.
COST_PER_CALL = (1200 * 1.0 + 8 * 5.0) / 1_000_000


def _score(body: dict[str, Any]) -> tuple[int, str]:
    prompt = body["messages"][0]["content"]
    query = re.search(r"^Query: (.*)$", prompt, re.MULTILINE)
    assert query is not None
    return 200, json.dumps({"score": 0.5 if query.group(1) in HALF else 1.0})


def _configure(project: Project, fake: FakeAnthropic, **judge: object) -> None:
    table = {"base_url": fake.base_url, "model": "claude-test-judge", **judge}
    lines = "".join(f"{key} = {json.dumps(value)}\n" for key, value in table.items())
    (project.root / "retrieval-eval.toml").write_text(
        CONFIG + "\n[judge]\n" + lines, encoding="utf-8"
    )


def _cli(
    args: list[str], project: Project, capsys: pytest.CaptureFixture[str]
) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exited:
        main(args)
    captured = capsys.readouterr()
    return int(exited.value.code or 0), captured.out, captured.err


@pytest.fixture
def in_project(project: Project, monkeypatch: pytest.MonkeyPatch) -> Project:
    monkeypatch.chdir(project.root)
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    monkeypatch.delenv("CI", raising=False)
    return project


def test_judged_run_records_scores_cost_and_shows_the_judge_row(
    in_project: Project, capsys: pytest.CaptureFixture[str]
) -> None:
    with FakeAnthropic(api_key=KEY, responder=_score) as fake:
        _configure(in_project, fake)
        code, out, err = _cli(["run", "--judge"], in_project, capsys)

    assert code == 0, err
    # One call per scored query (the expect_empty fixture has nothing to support), all with
    # the configured model: --judge turned the judge on without losing the file's [judge] table.
    # (The calibration's label calls, one per sampled document, are counted apart.)
    scoring = [r for r in fake.requests if "Passages:" in r.body["messages"][0]["content"]]
    assert len(scoring) == 11
    assert {r.body["model"] for r in fake.requests} == {"claude-test-judge"}
    report = json.loads((in_project.report_dir / "report.json").read_text(encoding="utf-8"))
    dataset = report["datasets"][0]
    scores = {q["query_id"]: q["judge_score"] for q in dataset["queries"]}
    assert scores["kw-01"] == 0.5 and scores["kw-02"] == 1.0 and scores["kw-12"] is None
    assert dataset["aggregates"]["judge"]["value"] == pytest.approx(10 / 11)
    assert dataset["judge"]["source"] == "judged"
    assert dataset["judge"]["cost_usd"] == pytest.approx(11 * COST_PER_CALL)
    assert dataset["queries"][0]["judge_cost_usd"] == pytest.approx(COST_PER_CALL)
    # The retrieval cost (what the cost gate reads) does not include the judge.
    assert dataset["cost_per_query_usd"] == 0.0
    markdown = (in_project.report_dir / "report.md").read_text(encoding="utf-8")
    assert "| Judge (LLM, not deterministic) | — | 0.909 |" in markdown
    assert "not deterministic and are not gated by default; judge cost $0.0136" in markdown
    baseline = in_project.baseline_data()["datasets"]["keyword.jsonl"]
    assert baseline["queries"]["kw-01"]["judge_score"] == 0.5
    assert len(baseline["queries"]["kw-01"]["judge_fingerprint"]) == 64
    for text in (out, err, markdown, json.dumps(report), in_project.baseline.read_text()):
        assert KEY not in text


def test_api_error_fails_the_run_and_leaves_the_baseline_and_report_untouched(
    in_project: Project, capsys: pytest.CaptureFixture[str]
) -> None:
    assert in_project.run().verdict == "baseline-established"
    baseline_before = in_project.baseline.read_bytes()
    assert b"judge_" not in baseline_before  # a never-judged baseline carries no judge keys
    report_before = (in_project.report_dir / "report.json").read_bytes()
    with FakeAnthropic(api_key=KEY, responder=lambda _: (500, "overloaded")) as fake:
        _configure(in_project, fake, max_retries=0)
        code, out, err = _cli(["run", "--judge"], in_project, capsys)

    assert code == 2
    assert "error: the judge's API call for query 'kw-01' failed with HTTP 500" in err
    assert len(fake.requests) == 1
    assert in_project.baseline.read_bytes() == baseline_before
    assert (in_project.report_dir / "report.json").read_bytes() == report_before
    assert KEY not in out + err


def test_judge_without_a_key_is_a_configuration_error(
    in_project: Project, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    with FakeAnthropic(api_key=KEY, responder=_score) as fake:
        _configure(in_project, fake)
        code, out, err = _cli(["run", "--judge"], in_project, capsys)

    assert code == 2
    assert out == ""
    assert "the LLM judge is enabled but ANTHROPIC_API_KEY is not set" in err
    assert fake.requests == []
    assert not in_project.baseline.exists()


def test_disabled_run_carries_scores_until_the_retrieved_text_changes(
    project: Project,
) -> None:
    with FakeAnthropic(api_key=KEY, responder=_score) as fake:
        judged = project.settings(judge={"enabled": True, "base_url": fake.base_url})
        first = run_evaluation(
            judged, progress=False, log=lambda _: None, anthropic_api_key=SecretStr(KEY)
        )
    assert first.verdict == "baseline-established"

    carried = project.run()
    assert carried.report is not None
    dataset = carried.report.datasets[0]
    assert dataset.judge is not None and dataset.judge.source == "carried-over"
    assert dataset.aggregates["judge"].value == pytest.approx(10 / 11)
    markdown = (project.report_dir / "report.md").read_text(encoding="utf-8")
    assert "| Judge (LLM, not deterministic) | 0.909 | 0.909 |" in markdown
    assert "judge scores carried over from the baseline" in markdown

    tart = project.corpus / "recipes" / "lemon-tart.md"
    tart.write_text(tart.read_text().replace("buttery pastry", "crisp buttery pastry"))
    dropped = project.run()
    assert dropped.report is not None
    dataset = dropped.report.datasets[0]
    assert "judge" not in dataset.aggregates
    assert all(q.judge_score is None for q in dataset.queries)
    markdown = (project.report_dir / "report.md").read_text(encoding="utf-8")
    assert DROPPED_NOTE in markdown
    assert "Judge (LLM" not in markdown


def test_judge_settings_default_off_and_key_is_not_a_setting(tmp_path: Path) -> None:
    project = Project(tmp_path)
    settings = project.settings()
    assert settings.judge.enabled is False
    assert settings.judge.model == "claude-haiku-4-5"
    with pytest.raises(ConfigError, match=r"unknown key 'judge\.api_key'"):
        project.settings(judge={"api_key": "x"})
