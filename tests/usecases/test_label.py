"""The labelling use case (`label_tier`) called directly, with the real anthropic client
against a Messages API on 127.0.0.1: the pool of the gated retriever and its challengers is
judged and written; a challenger that fails is said and left out while the gated retriever's
failure stops it; a budget too small to ask anything still writes the judgments file; and
the summary says what happened. (The command's own flags and exit codes:
tests/commands/test_label.py.)"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from pydantic import SecretStr

from retrieval_eval.errors import RetrievalEvalError
from retrieval_eval.load.corpus import load_corpus
from retrieval_eval.load.judgments import read_judgments
from retrieval_eval.usecases.label import LabelOutcome, label_tier, summary
from tests.commands.test_label import CONFIG, KEY, answer, judged_project
from tests.compare.conftest import Project
from tests.support.fake_anthropic import FakeAnthropic

UNREACHABLE = '\n[challengers.remote]\nretriever = "http"\n\n[challengers.remote.http]\nurl = "http://127.0.0.1:9/search"\n'


@pytest.fixture
def project(tmp_path: Path) -> Project:
    return judged_project(tmp_path)


def _label(
    project: Project, fake: FakeAnthropic, *, budget: float = 1.0, extra: str = ""
) -> tuple[LabelOutcome, list[str]]:
    config = CONFIG.format(base_url=fake.base_url, budget=budget) + extra
    (project.root / "retrieval-eval.toml").write_text(config, encoding="utf-8")
    settings = project.settings()
    logged: list[str] = []
    outcome = label_tier(
        settings, load_corpus(settings.corpus), api_key=SecretStr(KEY), log=logged.append
    )
    return outcome, logged


def test_the_pool_of_every_ranker_is_judged_and_written(project: Project) -> None:
    with FakeAnthropic(api_key=KEY, responder=answer) as fake:
        outcome, logged = _label(project, fake)
        calls = len(fake.requests)

    assert (outcome.queries, outcome.rankers) == (3, ("bm25", "substring"))
    written = read_judgments(outcome.path)
    assert outcome.path == project.datasets / "judged" / "judgments.jsonl"
    assert outcome.plan.new == outcome.new_judged == calls == len(written) == len(outcome.written)
    assert outcome.plan.current == outcome.plan.stale == 0
    assert written[("j-01", "recipes/lemon-tart")].grade == 2
    assert not outcome.judging.budget_reached and outcome.judging.stopped is None
    assert [line for line in logged if line.startswith("warning")] == []
    text = summary(outcome, max_cost_usd=1.0, shown=lambda path: path.name)
    assert text.splitlines()[0] == (
        f"pooled {calls} (query, document) pairs: top bm25 and substring for 3 queries"
    )
    assert text.splitlines()[-1] == f"wrote judgments.jsonl ({calls} judgments)"
    assert "budget reached" not in text


def test_a_failing_challenger_is_said_and_left_out(project: Project) -> None:
    with FakeAnthropic(api_key=KEY, responder=answer) as fake:
        outcome, logged = _label(project, fake, extra=UNREACHABLE)

    assert outcome.rankers == ("bm25", "substring")
    [warning] = [line for line in logged if line.startswith("warning")]
    assert warning.startswith("warning: challenger remote is not pooled: ")
    assert "127.0.0.1:9" in warning


def test_the_gated_retrievers_failure_stops_it_before_any_judging(project: Project) -> None:
    gated_remote = (
        UNREACHABLE.replace("[challengers.remote]\n", "")
        .replace("[challengers.remote.http]", "[retrievers.http]")
        .replace('retriever = "http"\n', "")
    )
    with FakeAnthropic(api_key=KEY, responder=answer) as fake:
        config = CONFIG.format(base_url=fake.base_url, budget=1.0).replace(
            '"queries.jsonl" = "bm25"', '"queries.jsonl" = "http"'
        )
        (project.root / "retrieval-eval.toml").write_text(config + gated_remote, encoding="utf-8")
        settings = project.settings()
        logged: list[str] = []
        with pytest.raises(RetrievalEvalError, match=re.escape("127.0.0.1:9")):
            label_tier(
                settings, load_corpus(settings.corpus), api_key=SecretStr(KEY), log=logged.append
            )
        assert fake.requests == []
    assert not (project.datasets / "judged" / "judgments.jsonl").exists()


def test_a_budget_too_small_for_one_call_still_writes_the_file(project: Project) -> None:
    with FakeAnthropic(api_key=KEY, responder=answer) as fake:
        outcome, _ = _label(project, fake, budget=0.0001)
        assert fake.requests == []

    assert outcome.judging.budget_reached
    assert outcome.path.read_text(encoding="utf-8") == ""
    text = summary(outcome, max_cost_usd=0.0001, shown=str)
    left = len(outcome.plan.to_judge)
    assert f"budget reached: {left} pairs left unjudged; " in text
    assert "(or --max-cost-usd)" in text
