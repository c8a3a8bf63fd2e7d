"""The LLM judge's label of one (query, document) pair, through the real ``anthropic``
client against a loopback Messages API: relevant from a score of 0.5, the document cut to
its opening, a reply cached by what was judged, and a malformed reply refused and never
served again."""

from __future__ import annotations

from pathlib import Path

import pytest

from retrieval_eval.score.cached_claude import CachedClaude
from retrieval_eval.score.judge import JudgeError, JudgePricing, build_client
from retrieval_eval.score.label_judge import (
    DOCUMENT_CHARS,
    LABEL_PROMPT_VERSION,
    RELEVANT_AT,
    LabelJudge,
)
from tests.support.fake_anthropic import FakeAnthropic


def judge(fake: FakeAnthropic, cache: Path) -> LabelJudge:
    client = build_client(api_key=fake.api_key, base_url=fake.base_url, max_retries=0)
    return LabelJudge(
        CachedClaude(
            client,
            model="claude-haiku-4-5",
            prompt_version=LABEL_PROMPT_VERSION,
            cache_dir=cache,
            pricing=JudgePricing(1.0, 5.0),
            max_cost_usd=1.0,
            failure=JudgeError,
        )
    )


def test_a_pair_is_judged_relevant_from_the_cut_and_asked_once(tmp_path: Path) -> None:
    scores = iter(['{"score": 0.5}', '{"score": 0.49}'])
    text = "Pastel de nata every morning. " + "x" * (2 * DOCUMENT_CHARS)
    with FakeAnthropic(responder=lambda body: (200, next(scores))) as fake:
        labeller = judge(fake, tmp_path)
        first = labeller.judge("q1", "lisbon food", "travel/lisbon", text)
        second = labeller.judge("q1", "lisbon food", "travel/kyoto", "Temples.")
        again = labeller.judge("q1", "lisbon food", "travel/lisbon", text)
    assert (first.judgement.relevant, first.judgement.score, first.cached) == (True, 0.5, False)
    assert first.judgement.score == RELEVANT_AT
    assert (second.judgement.relevant, second.judgement.score) == (False, 0.49)
    assert (again.judgement, again.cost_usd, again.cached) == (first.judgement, 0.0, True)
    assert first.judgement.model == "claude-haiku-4-5"
    assert len(fake.requests) == 2
    prompt = fake.requests[0].body["messages"][0]["content"]
    assert "Query: lisbon food" in prompt and "Document (travel/lisbon):" in prompt
    assert "x" * DOCUMENT_CHARS not in prompt  # the opening only
    assert labeller.calls == 2
    assert labeller.spent_usd == pytest.approx(first.cost_usd + second.cost_usd)


def test_a_malformed_reply_is_refused_and_asked_again_next_time(tmp_path: Path) -> None:
    replies = iter(["relevant, I think", '{"score": 0.9}'])
    with FakeAnthropic(responder=lambda body: (200, next(replies))) as fake:
        labeller = judge(fake, tmp_path)
        with pytest.raises(JudgeError, match="q1"):
            labeller.judge("q1", "lisbon food", "travel/lisbon", "Pastel de nata.")
        fixed = labeller.judge("q1", "lisbon food", "travel/lisbon", "Pastel de nata.")
    assert (fixed.judgement.score, fixed.cached) == (0.9, False)
    assert len(fake.requests) == 2
