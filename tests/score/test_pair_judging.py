"""Judging (query, document) pairs: the pool's order, which pairs need the judge, the grade
scale, and judge_pairs against a Messages API on 127.0.0.1 (cache, budget, a bad reply)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from retrieval_eval.load.documents import Document
from retrieval_eval.load.judgments import JudgedQuery, Judgment, Judgments, text_sha256
from retrieval_eval.score.judge import JudgePricing, build_client
from retrieval_eval.score.label_judge import LABEL_PROMPT_SHA256
from retrieval_eval.score.pair_judging import (
    Pair,
    grade_of,
    judge_pairs,
    label_judge,
    plan_pairs,
    pool,
)
from tests.support.fake_anthropic import FakeAnthropic

KEY = "sk-ant-test-pairs-1188"
Q1, Q2 = JudgedQuery("q1", "first"), JudgedQuery("q2", "second")


def test_the_pool_is_each_query_s_union_ordered_by_rank_first() -> None:
    gated = {"q1": ["a", "b", "c", "d"], "q2": ["x"]}
    challenger = {"q1": ["b", "e", "a"], "q2": ["y", "x", "z"]}
    pooled = pool([Q1, Q2], [gated, challenger], depth=3)
    assert [(q.query_id, d) for q, d in pooled] == [
        ("q1", "a"),
        ("q2", "x"),
        ("q1", "b"),
        ("q2", "y"),
        ("q1", "e"),
        ("q2", "z"),
        ("q1", "c"),
    ]
    assert pool([Q1], [{"q1": ["a", "a", "b"]}], depth=2) == [(Q1, "a"), (Q1, "b")]
    assert pool([Q1], [{}], depth=5) == []


def test_grades_follow_the_prompt_s_scale() -> None:
    assert [grade_of(s) for s in (0.0, 0.49, 0.5, 0.74, 0.75, 1.0)] == [0, 0, 1, 1, 2, 2]


def _document(doc_id: str, text: str) -> Document:
    return Document(id=doc_id, title=doc_id, text=text)


def test_the_plan_judges_new_and_stale_pairs_and_skips_current_ones() -> None:
    documents = {d: _document(d, f"text of {d}") for d in ("a", "b", "c", "d")}

    def recorded(doc_id: str, **changes: str) -> Judgment:
        fields = {
            "judge_model": "m",
            "prompt_sha256": LABEL_PROMPT_SHA256,
            "doc_sha256": text_sha256(f"text of {doc_id}"),
            **changes,
        }
        return Judgment("q1", doc_id, 1, **fields)

    existing = Judgments(
        [recorded("a"), recorded("b", judge_model="old"), recorded("c", doc_sha256="0" * 64)]
    )
    pooled = [(Q1, "a"), (Q1, "b"), (Q1, "c"), (Q1, "d"), (Q1, "gone")]
    plan = plan_pairs(pooled, documents, existing, model="m")
    assert [p.doc_id for p in plan.to_judge] == ["b", "c", "d"]
    assert (plan.new, plan.stale, plan.current, plan.missing) == (1, 2, 1, ("gone",))
    assert plan.to_judge[2] == Pair("q1", "first", "d", "text of d")


def _answer(body: dict[str, Any]) -> tuple[int, str]:
    prompt = body["messages"][0]["content"]
    if "(bad)" in prompt:
        return 200, "I think it is relevant"
    return 200, json.dumps({"score": 0.8 if "(rel)" in prompt else 0.2})


def test_judge_pairs_stamps_each_judgment_uses_the_cache_and_stops_at_the_budget(
    tmp_path: Path,
) -> None:
    pairs = [Pair("q1", "first", d, f"text {d}") for d in ("rel", "no", "x1", "x2", "x3")]
    with FakeAnthropic(api_key=KEY, responder=_answer) as fake:
        client = build_client(api_key=KEY, base_url=fake.base_url, max_retries=0)

        def judge(budget: float) -> Any:
            return label_judge(
                client,
                model="claude-haiku-4-5",
                pricing=JudgePricing(),
                max_cost_usd=budget,
                cache_dir=tmp_path,
            )

        first = judge_pairs(pairs[:2], judge(1.0))
        # Two cached pairs cost nothing; the budget then buys one more call (each costs
        # $0.00124, the worst case of the next a little under $0.0004).
        second = judge_pairs(pairs, judge(0.0016))
    assert first.stopped is None and first.calls == 2 and first.cached == 0
    assert (first.input_tokens, first.output_tokens) == (2400, 16)
    assert first.cost_usd == 2 * (1200 * 1.0 + 8 * 5.0) / 1_000_000
    rel = first.judgments[("q1", "rel")]
    assert rel.grade == 2 and first.judgments[("q1", "no")].grade == 0
    assert rel.judge_model == "claude-haiku-4-5" and rel.prompt_sha256 == LABEL_PROMPT_SHA256
    assert rel.doc_sha256 == text_sha256("text rel")
    assert second.cached == 2 and second.calls == 1 and len(second.judgments) == 3
    assert second.budget_reached and second.stopped is not None
    assert "max-cost-usd" in second.stopped
    assert len(fake.requests) == 3


def test_a_reply_that_is_not_a_score_stops_judging_with_what_was_judged(tmp_path: Path) -> None:
    pairs = [Pair("q1", "first", d, "t") for d in ("ok", "bad", "later")]
    with FakeAnthropic(api_key=KEY, responder=_answer) as fake:
        client = build_client(api_key=KEY, base_url=fake.base_url, max_retries=0)
        judge = label_judge(
            client, model="m", pricing=JudgePricing(), max_cost_usd=1.0, cache_dir=tmp_path
        )
        judged = judge_pairs(pairs, judge)
    assert list(judged.judgments) == [("q1", "ok")]
    assert not judged.budget_reached
    assert judged.stopped is not None and "not a score between 0 and 1" in judged.stopped
    assert judged.calls == 2


def test_without_a_client_only_cached_replies_are_had(tmp_path: Path) -> None:
    judge = label_judge(
        None, model="m", pricing=JudgePricing(), max_cost_usd=1.0, cache_dir=tmp_path
    )
    judged = judge_pairs([Pair("q1", "first", "d", "t")], judge)
    assert len(judged.judgments) == 0 and judged.calls == 0
    assert judged.stopped is not None and "ANTHROPIC_API_KEY is not set" in judged.stopped
