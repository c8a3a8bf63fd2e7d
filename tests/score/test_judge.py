"""The Claude judge against a real HTTP server speaking the Messages API."""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from retrieval_eval.score.judge import (
    ClaudeJudge,
    JudgeError,
    JudgePricing,
    build_client,
    carry_over_scores,
    judged_fingerprint,
    parse_score,
)
from tests.support.fake_anthropic import FakeAnthropic

PASSAGES = [("travel/lisbon", "Budget: 60 EUR a day."), ("travel/porto", "Trains are cheap.")]


def _judge(fake: FakeAnthropic, *, max_retries: int = 0, key: str = "test-key") -> ClaudeJudge:
    client = build_client(api_key=key, base_url=fake.base_url, max_retries=max_retries)
    return ClaudeJudge(client, model="claude-haiku-4-5", pricing=JudgePricing(1.0, 5.0))


@pytest.mark.slow
def test_score_cost_and_request_shape() -> None:
    with FakeAnthropic(responder=lambda body: (200, '{"score": 0.75}')) as fake:
        judged = _judge(fake).judge("q1", "How much per day in Lisbon?", PASSAGES, "60 EUR")
    assert judged.score == 0.75
    # 1,200 input tokens at $1/MTok + 8 output tokens at $5/MTok
    assert judged.cost_usd == pytest.approx(0.00124)
    assert judged.fingerprint == judged_fingerprint(PASSAGES)
    (request,) = fake.requests
    assert request.body["model"] == "claude-haiku-4-5"
    prompt = request.body["messages"][0]["content"]
    assert "How much per day in Lisbon?" in prompt
    assert "[1] (travel/lisbon)\nBudget: 60 EUR a day." in prompt
    assert "expected answer, for reference: 60 EUR" in prompt


def test_server_error_fails_instead_of_recording_zero() -> None:
    failure = pytest.raises(JudgeError, match=r"query 'q1' failed with HTTP 500; no score")
    with FakeAnthropic(responder=lambda body: (500, "boom")) as fake, failure:
        _judge(fake).judge("q1", "query", PASSAGES)


def test_transient_error_is_retried_by_the_client() -> None:
    replies = iter([(529, "overloaded"), (200, '{"score": 0.5}')])

    def responder(body: dict[str, Any]) -> tuple[int, str]:
        return next(replies)

    with FakeAnthropic(responder=responder) as fake:
        judged = _judge(fake, max_retries=2).judge("q1", "query", PASSAGES)
    assert judged.score == 0.5
    assert len(fake.requests) == 2


def test_wrong_key_is_an_error_that_does_not_show_the_key() -> None:
    with FakeAnthropic() as fake, pytest.raises(JudgeError) as caught:
        _judge(fake, key="sk-secret-123").judge("q1", "query", PASSAGES)
    assert "HTTP 401" in str(caught.value)
    assert "sk-secret-123" not in str(caught.value)


@pytest.mark.parametrize("reply", ["0.8", "score: 0.8", '{"score": 1.5}', '{"score": true}', "{}"])
def test_malformed_scores_fail_the_run(reply: str) -> None:
    failure = pytest.raises(JudgeError, match=re.escape("is not a score between 0 and 1"))
    with FakeAnthropic(responder=lambda body: (200, reply)) as fake, failure:
        _judge(fake).judge("q7", "query", PASSAGES)


def test_fenced_json_is_accepted() -> None:
    assert parse_score('```json\n{"score": 0.25}\n```', query_id="q") == 0.25


def test_scores_carry_over_only_without_drift() -> None:
    fp = judged_fingerprint(PASSAGES)
    previous = {"q1": (fp, 0.9), "q2": ("other", 0.4)}
    assert carry_over_scores(previous, {"q1": fp, "q2": "other"}) == {"q1": 0.9, "q2": 0.4}
    # one query's retrieved text drifted: the whole column goes
    assert carry_over_scores(previous, {"q1": fp, "q2": "changed"}) is None
    # a query was added or removed
    assert carry_over_scores(previous, {"q1": fp}) is None
    assert carry_over_scores(None, {"q1": fp}) is None


def test_fingerprint_depends_on_order_and_text() -> None:
    assert judged_fingerprint(PASSAGES) != judged_fingerprint(list(reversed(PASSAGES)))
    changed = [PASSAGES[0], ("travel/porto", "Trains are cheap!")]
    assert judged_fingerprint(PASSAGES) != judged_fingerprint(changed)


def _fingerprint_pair_by_pair(passages: list[tuple[str, str]]) -> str:
    """How the fingerprint was first computed (one hash update per pair): baselines
    recorded with it must still carry their judge scores over."""
    digest = hashlib.sha256()
    for doc_id, text in passages:
        digest.update(json.dumps([doc_id, text], ensure_ascii=False).encode("utf-8"))
        digest.update(b"\n")
    return digest.hexdigest()


def test_fingerprint_is_the_one_baselines_recorded() -> None:
    passages = [*PASSAGES, ("wiki/é", 'naïve "quoted" \\ text\nline')]
    assert judged_fingerprint(passages) == (
        "48457cd7a094fa64e16a1fd98ff98e627a8ce5c44092e3cc84cb9b4cf36d7937"
    )


_TEXT = st.text(st.characters(blacklist_categories=("Cs",)))


@given(st.lists(st.tuples(_TEXT, _TEXT), max_size=12))
def test_fingerprint_matches_hashing_pair_by_pair(passages: list[tuple[str, str]]) -> None:
    assert judged_fingerprint(passages) == _fingerprint_pair_by_pair(passages)
