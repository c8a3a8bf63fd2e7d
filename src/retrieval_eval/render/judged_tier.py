"""The words the report uses for the judged tier: whether it gated and why not, the
judge's agreement with the human tier, how much of the top k was judged. Registered as
template filters (``TIER_FILTERS``); the template passes every line through ``md``."""

from __future__ import annotations

from retrieval_eval.render.labels import share_text
from retrieval_eval.results import JudgedTier
from retrieval_eval.vocabulary import (
    AGREEMENT_SOURCE,
    JUDGE_IS_RERANKER,
    TIER_NOT_GATING,
    TIER_STATUS,
)

# How much of the label prompt's sha256 the report shows: enough to tell two apart.
PROMPT_SHOWN = 12


def _kappa(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f}"


def tier_status(tier: JudgedTier) -> str:
    return TIER_STATUS[tier.gates]


def not_gating_line(tier: JudgedTier) -> str:
    """Why the tier did not gate, in one line ("" when it gated)."""
    if tier.not_gating is None:
        return ""
    agreement = tier.agreement
    return "Not gated: " + TIER_NOT_GATING[tier.not_gating].format(
        kappa=_kappa(None if agreement is None else agreement.kappa),
        sample=0 if agreement is None else agreement.sample_size,
        floor=f"{tier.kappa_floor:.2f}",
    )


def agreement_line(tier: JudgedTier) -> str:
    """The agreement the tier's gating rests on, with its sample size and what it was
    measured for."""
    a = tier.agreement
    if a is None:
        return f"Judge agreement with the human tier: not measured (floor κ {tier.kappa_floor:.2f})"
    source = AGREEMENT_SOURCE[a.source]
    stopped = "" if a.stopped is None else f"; {a.stopped}"
    return (
        f"Judge agreement with the human tier: Cohen's κ {_kappa(a.kappa)} on "
        f"{a.sample_size} pair{'' if a.sample_size == 1 else 's'} (floor {tier.kappa_floor:.2f}; "
        f"{a.model}, prompt {a.prompt_sha256[:PROMPT_SHOWN]}, seed {a.seed}, {source}){stopped}"
    )


def coverage_line(tier: JudgedTier, k: int) -> str:
    """judged@k and what was judged on the fly."""
    line = (
        f"judged@{k}: {share_text(tier.judged_at_k)} of the {tier.results_at_k} results in the "
        "top k have a current judgment (a result nobody judged counts as not relevant)"
    )
    if tier.judged_on_the_fly:
        line += (
            f"; {tier.judged_on_the_fly} pair{'' if tier.judged_on_the_fly == 1 else 's'} new in "
            f"the top k judged on the fly (${tier.on_the_fly_cost_usd:.4f})"
        )
        if not tier.judgments_written:
            line += (
                ", not written to the judgments file by this run: `retrieval-eval label` on the "
                "branch records them"
            )
    return line


def reranker_line(tier: JudgedTier) -> str:
    return JUDGE_IS_RERANKER if tier.judge_is_reranker else ""


TIER_FILTERS = {
    "tier_status": tier_status,
    "tier_not_gating": not_gating_line,
    "tier_agreement": agreement_line,
    "tier_coverage": coverage_line,
    "tier_reranker": reranker_line,
}
