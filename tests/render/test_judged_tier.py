"""The judged tier's words in the comment: whether it gated and, when not, why in one line;
the agreement with its sample size, the floor, the model and prompt it was measured for;
judged@k and the judgments made on the fly; the reranker caveat. User text (the model name,
the queries file) goes through the one escaping function."""

from __future__ import annotations

import pytest

from retrieval_eval.render.judged_tier import (
    agreement_line,
    coverage_line,
    not_gating_line,
    reranker_line,
)
from retrieval_eval.render.markdown import render_markdown
from retrieval_eval.render.report_html import render_html
from retrieval_eval.render.terminal import terminal_summary
from retrieval_eval.results import JudgeAgreement, JudgedTier
from retrieval_eval.vocabulary import JUDGE_IS_RERANKER, TIER_REASONS, TierReason
from tests.render.reports import dataset, mrr_row, query, report

PROMPT = "0123456789ab" + "c" * 52


def _tier(
    *,
    reason: TierReason | None = None,
    kappa: float | None = 0.72,
    model: str = "claude-haiku-4-5",
    on_the_fly: int = 0,
    written: bool = False,
    reranker: bool = False,
    queries_file: str = "queries.jsonl",
) -> JudgedTier:
    measured = dataset(
        [query("j-01", "lemon tart"), query("j-02", "kyoto", rank=2)],
        rows=[mrr_row(0.9, 0.75, "regressed" if reason is None else "not-gated")],
        name=f"{queries_file} (judged)",
    )
    return JudgedTier(
        queries_file=queries_file,
        report=measured,
        judged_at_k=0.875,
        results_at_k=40,
        judged_on_the_fly=on_the_fly,
        on_the_fly_cost_usd=0.0021,
        judgments_written=written,
        agreement=JudgeAgreement(
            model=model,
            prompt_sha256=PROMPT,
            seed=7,
            sample_size=20,
            kappa=kappa,
            accuracy=0.85,
            source="measured",
        ),
        kappa_floor=0.6,
        gates=reason is None,
        not_gating=reason,
        judge_is_reranker=reranker,
    )


def test_the_agreement_names_its_sample_floor_model_and_prompt() -> None:
    line = agreement_line(_tier())
    assert line == (
        "Judge agreement with the human tier: Cohen's κ 0.72 on 20 pairs (floor 0.60; "
        "claude-haiku-4-5, prompt 0123456789ab, seed 7, measured by this run)"
    )


def test_below_the_floor_says_the_kappa_the_sample_and_the_floor() -> None:
    line = not_gating_line(_tier(reason="below-floor", kappa=0.41))
    assert line == (
        "Not gated: the judge agrees with your people at κ 0.41 on 20 pairs, below the floor "
        "of 0.60 ([judged] kappa_floor)"
    )
    assert not_gating_line(_tier()) == ""


@pytest.mark.parametrize("reason", TIER_REASONS)
def test_every_reason_is_one_line(reason: TierReason) -> None:
    line = not_gating_line(_tier(reason=reason))
    assert line.startswith("Not gated: ") and "\n" not in line and "{" not in line


def test_judgments_made_on_the_fly_say_how_to_record_them_unless_written() -> None:
    assert "on the fly" not in coverage_line(_tier(), 10)
    line = coverage_line(_tier(on_the_fly=3), 10)
    assert line.startswith("judged@10: 88% of the 40 results")
    assert "3 pairs new in the top k judged on the fly ($0.0021)" in line
    assert "`retrieval-eval label` on the branch records them" in line
    assert "records them" not in coverage_line(_tier(on_the_fly=3, written=True), 10)


def test_the_reranker_caveat_only_when_the_judge_also_reranks() -> None:
    assert reranker_line(_tier()) == ""
    assert reranker_line(_tier(reranker=True)) == JUDGE_IS_RERANKER


def test_the_section_sits_beside_the_datasets_and_escapes_user_text() -> None:
    human = dataset([query("h-01", "lemon")], rows=[mrr_row(1.0, 1.0)])
    tier = _tier(
        reason="below-floor", model="claude|@team", queries_file="q*<b>.jsonl", reranker=True
    )
    text = render_markdown(report([human]).model_copy(update={"judged_tier": tier}), max_chars=None)
    section = text[text.index("### ⚖️ Judged tier") :]
    assert "reported, not gated" in section.splitlines()[0]
    assert "q\\*&lt;b&gt;.jsonl" in section and "<b>" not in section
    assert "claude\\|@\u200bteam" in section
    assert "Not gated: the judge agrees with your people at κ 0.72" in section
    assert JUDGE_IS_RERANKER.split(":")[0] in section
    assert "| MRR@10 | 0.900 | 0.750 |" in section
    # The human dataset's summary row comes first and holds no tier numbers.
    summary = text[: text.index("### ⚖️ Judged tier")]
    assert "hybrid.jsonl" in summary and "(judged)" not in summary


def test_the_terminal_summary_shows_the_tier_under_the_datasets() -> None:
    human = dataset([query("h-01", "lemon")], rows=[mrr_row(1.0, 1.0)])
    tier = _tier(reason="no-key", on_the_fly=0)
    text = terminal_summary(
        report([human]).model_copy(update={"judged_tier": tier}), report_markdown=None, color=False
    )
    after = text[text.index("hybrid.jsonl") :]
    assert "Judged tier (reported, not gated):" in after
    assert "queries.jsonl (judged)" in after
    assert "Not gated: ANTHROPIC_API_KEY is not set" in after
    assert "Cohen's κ 0.72 on 20 pairs" in after


def test_report_html_has_the_tier_section_escaped() -> None:
    human = dataset([query("h-01", "lemon")], rows=[mrr_row(1.0, 1.0)])
    tier = _tier(reason="stale", queries_file="q<script>.jsonl")
    page = render_html(report([human]).model_copy(update={"judged_tier": tier}))
    section = page[page.index('<section id="judged-tier">') :]
    assert "q&lt;script&gt;.jsonl" in section and "<script>" not in section
    assert "reported, not gated" in section
    assert "Not gated: the judge&#39;s agreement on record was measured with another" in section
