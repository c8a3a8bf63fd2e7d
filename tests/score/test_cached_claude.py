"""Messages API calls with a reply cache and a cost cap, through the real ``anthropic``
client against a loopback server speaking the Messages API: a reply is kept and served
again for nothing, a different model or prompt version asks again, the cap stops a call
before it could pass it, and without a key only cached prompts are answered."""

from __future__ import annotations

from pathlib import Path

import pytest

from retrieval_eval.errors import RetrievalEvalError
from retrieval_eval.score.cached_claude import CachedClaude, CostCapReached
from retrieval_eval.score.judge import JudgePricing, build_client
from tests.support.fake_anthropic import FakeAnthropic


class Failed(RetrievalEvalError):
    pass


def cached(
    fake: FakeAnthropic | None,
    cache: Path,
    *,
    model: str = "claude-haiku-4-5",
    version: str = "v1",
    cap: float = 1.0,
) -> CachedClaude:
    client = (
        None
        if fake is None
        else build_client(api_key=fake.api_key, base_url=fake.base_url, max_retries=0)
    )
    return CachedClaude(
        client,
        model=model,
        prompt_version=version,
        cache_dir=cache,
        pricing=JudgePricing(1.0, 5.0),
        max_cost_usd=cap,
        failure=Failed,
        missing_key="set ANTHROPIC_API_KEY to label",
    )


def test_a_reply_is_paid_once_and_then_served_from_the_cache(tmp_path: Path) -> None:
    with FakeAnthropic(responder=lambda body: (200, "Lisbon, 60 EUR")) as fake:
        claude = cached(fake, tmp_path)
        first = claude.ask("What does a day in Lisbon cost?", about="q1")
        again = claude.ask("What does a day in Lisbon cost?", about="q1")
        # Another run, another object, the same folder: still nothing asked.
        later = cached(fake, tmp_path).ask("What does a day in Lisbon cost?", about="q1")
    assert (first.text, first.cached) == ("Lisbon, 60 EUR", False)
    assert first.cost_usd == pytest.approx(0.00124)  # 1,200 in at $1/MTok + 8 out at $5/MTok
    assert (again.text, again.cost_usd, again.cached) == ("Lisbon, 60 EUR", 0.0, True)
    assert later.cached
    assert len(fake.requests) == 1
    assert (claude.calls, claude.cached_calls, claude.spent_usd) == (1, 1, first.cost_usd)
    assert fake.requests[0].body["messages"][0]["content"] == "What does a day in Lisbon cost?"


def test_another_model_or_prompt_version_asks_again(tmp_path: Path) -> None:
    with FakeAnthropic(responder=lambda body: (200, "ok")) as fake:
        cached(fake, tmp_path).ask("p", about="q1")
        cached(fake, tmp_path, version="v2").ask("p", about="q1")
        cached(fake, tmp_path, model="team-gateway-model").ask("p", about="q1")
        assert cached(fake, tmp_path, version="v2").is_cached("p")
    assert len(fake.requests) == 3


def test_a_forgotten_or_unreadable_reply_is_asked_again(tmp_path: Path) -> None:
    with FakeAnthropic(responder=lambda body: (200, "ok")) as fake:
        claude = cached(fake, tmp_path)
        claude.ask("p", about="q1")
        claude.forget("p")
        assert not claude.is_cached("p")
        claude.ask("p", about="q1")
        for path in tmp_path.rglob("*.json"):
            path.write_text('{"text": 3}\n', encoding="utf-8")
        assert not claude.is_cached("p")
        claude.ask("p", about="q1")
    assert len(fake.requests) == 3


def test_the_cap_stops_a_call_before_it_could_pass_it(tmp_path: Path) -> None:
    with FakeAnthropic(responder=lambda body: (200, "ok")) as fake:
        # The worst a call can cost: (len(prompt) // 2 + 200) in + 400 out = 0.0022 here.
        claude = cached(fake, tmp_path, cap=0.003)
        claude.ask("a prompt", about="q1")
        with pytest.raises(CostCapReached) as raised:
            claude.ask("another prompt", about="q2")
        assert claude.ask("a prompt", about="q1").cached  # the cache still answers
    assert str(raised.value) == (
        "stopped before passing --max-cost-usd 0.003: $0.0012 spent, "
        "the next call could cost up to $0.0022"
    )
    assert len(fake.requests) == 1


def test_without_a_key_only_cached_prompts_are_answered(tmp_path: Path) -> None:
    with FakeAnthropic(responder=lambda body: (200, "kept")) as fake:
        cached(fake, tmp_path).ask("p", about="q1")
    offline = cached(None, tmp_path)
    assert offline.ask("p", about="q1").text == "kept"
    with pytest.raises(Failed, match="ANTHROPIC_API_KEY is not set and this prompt's answer"):
        offline.ask("new", about="q1")
