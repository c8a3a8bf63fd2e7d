"""Whether the judged tier may gate: the agreement reused while the judge model, prompt and
seed match the record, stale when they do not and nobody can measure it again, and the
one reason the tier is reported instead, in the order a reader can act on."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from retrieval_eval.compare.baseline import BaselineAgreement
from retrieval_eval.compare.calibration_floor import (
    not_gating,
    recorded_agreement,
    tier_agreement,
)
from retrieval_eval.results import JudgeAgreement
from retrieval_eval.vocabulary import TIER_NOT_GATING, TIER_REASONS

PROMPT = "a" * 64
RECORD = BaselineAgreement(
    model="claude-haiku-4-5", prompt_sha256=PROMPT, seed=7, sample_size=20, kappa=0.7
)


def _measured(kappa: float | None, *, stopped: str | None = None) -> JudgeAgreement:
    return JudgeAgreement(
        model="m",
        prompt_sha256=PROMPT,
        seed=0,
        sample_size=20,
        kappa=kappa,
        source="measured",
        stopped=stopped,
    )


def test_a_record_for_the_same_judge_is_reused_without_a_judge() -> None:
    agreement = tier_agreement(
        [], {}, None, RECORD, model="claude-haiku-4-5", prompt_sha256=PROMPT, size=20, seed=7
    )
    assert agreement is not None
    assert (agreement.source, agreement.kappa, agreement.sample_size) == ("recorded", 0.7, 20)
    assert not_gating(agreement, floor=0.6, key_set=True, budget_out=False) is None


@pytest.mark.parametrize(
    ("model", "prompt", "seed"),
    [
        ("claude-opus-4", PROMPT, 7),
        ("claude-haiku-4-5", "b" * 64, 7),
        ("claude-haiku-4-5", PROMPT, 8),
    ],
)
def test_a_record_for_another_judge_model_prompt_or_seed_is_stale_without_a_judge(
    model: str, prompt: str, seed: int
) -> None:
    agreement = tier_agreement(
        [], {}, None, RECORD, model=model, prompt_sha256=prompt, size=20, seed=seed
    )
    assert agreement is not None and agreement.source == "stale"
    assert not_gating(agreement, floor=0.6, key_set=True, budget_out=False) == "stale"
    assert recorded_agreement(agreement) is None  # a stale agreement is never recorded again


def test_nothing_to_measure_and_no_record_is_no_agreement() -> None:
    assert (
        tier_agreement([], {}, None, None, model="m", prompt_sha256=PROMPT, size=20, seed=0) is None
    )
    assert not_gating(None, floor=0.6, key_set=True, budget_out=False) == "no-agreement"


def test_the_floor_is_inclusive_and_an_undefined_kappa_does_not_clear_it() -> None:
    assert not_gating(_measured(0.6), floor=0.6, key_set=True, budget_out=False) is None
    assert not_gating(_measured(0.59), floor=0.6, key_set=True, budget_out=False) == "below-floor"
    assert not_gating(_measured(None), floor=-1.0, key_set=True, budget_out=False) == "below-floor"


def test_the_key_comes_first_then_the_budget_then_a_failure() -> None:
    low = _measured(0.1)
    assert not_gating(low, floor=0.6, key_set=False, budget_out=True) == "no-key"
    assert not_gating(low, floor=0.6, key_set=True, budget_out=True) == "budget"
    assert not_gating(_measured(0.9, stopped="cap"), floor=0.6, key_set=True, budget_out=False) == (
        "budget"
    )
    assert not_gating(low, floor=0.6, key_set=True, budget_out=False, failed=True) == "judge-failed"


@given(
    kappa=st.one_of(st.none(), st.floats(-1.0, 1.0)),
    floor=st.floats(-1.0, 1.0),
    key_set=st.booleans(),
    budget_out=st.booleans(),
    failed=st.booleans(),
)
def test_the_tier_gates_exactly_when_every_condition_holds(
    kappa: float | None, floor: float, key_set: bool, budget_out: bool, failed: bool
) -> None:
    reason = not_gating(
        _measured(kappa), floor=floor, key_set=key_set, budget_out=budget_out, failed=failed
    )
    clears = kappa is not None and kappa >= floor
    assert (reason is None) == (key_set and not budget_out and not failed and clears)
    assert reason is None or reason in TIER_REASONS


def test_every_reason_has_its_one_line() -> None:
    assert set(TIER_NOT_GATING) == set(TIER_REASONS)
    assert all("\n" not in line for line in TIER_NOT_GATING.values())


def test_a_measured_agreement_is_recorded_rounded_and_a_cut_short_one_is_not() -> None:
    kept = recorded_agreement(_measured(2 / 3))
    assert kept is not None and kept.kappa == round(2 / 3, 12) and kept.prompt_sha256 == PROMPT
    assert recorded_agreement(_measured(0.9, stopped="the cap")) is None
