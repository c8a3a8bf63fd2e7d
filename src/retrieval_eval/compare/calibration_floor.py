"""Whether the judged tier may decide the verdict: the judge's agreement with the human tier
against the floor.

The agreement is Cohen's κ on a sample of the human datasets' pairs drawn with the run's
seed, both classes, exactly as each dataset's calibration draws it (``label_judging.py``):
the expected documents of human-annotated fixtures, and the same queries' best-ranked
unlabelled documents. It is recorded (baseline.json) with the judge model and the label
prompt's sha256 it was measured for. A run whose judge model and prompt match the record
reuses it without a call; when either changed it is measured again, and when it cannot be
(no key) the recorded value is stale and the tier does not gate.

The tier gates only when every one of these holds: the key is set, the budget lasted,
an agreement exists for this judge model and prompt, and its κ clears ``kappa_floor``.
Otherwise the reason (``vocabulary.TIER_NOT_GATING``) is said in one line.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from retrieval_eval.compare.baseline import BaselineAgreement
from retrieval_eval.compare.label_judging import Pair, calibration_sample, judge_sample
from retrieval_eval.load.documents import Document
from retrieval_eval.load.fixtures import LocatedFixture
from retrieval_eval.results import DatasetReport, JudgeAgreement
from retrieval_eval.score.label_judge import LabelJudge
from retrieval_eval.vocabulary import AgreementSource, TierReason


@dataclass(frozen=True)
class HumanDataset:
    """One human dataset as the sample needs it: its fixtures and this run's results."""

    fixtures: Sequence[LocatedFixture]
    report: DatasetReport


def agreement_sample(datasets: Sequence[HumanDataset], *, size: int, seed: int) -> list[Pair]:
    """Up to ``size`` pairs of each dataset (both classes, drawn with ``seed``), in the
    datasets' order."""
    return [
        pair
        for one in datasets
        for pair in calibration_sample(one.fixtures, one.report, size=size, seed=seed)
    ]


def _from_record(recorded: BaselineAgreement, source: AgreementSource) -> JudgeAgreement:
    """The baseline's record of an agreement, as this run reports it."""
    return JudgeAgreement(
        model=recorded.model,
        prompt_sha256=recorded.prompt_sha256,
        seed=recorded.seed,
        sample_size=recorded.sample_size,
        kappa=recorded.kappa,
        accuracy=recorded.accuracy,
        source=source,
    )


def tier_agreement(
    datasets: Sequence[HumanDataset],
    documents: Mapping[str, Document],
    judge: LabelJudge | None,
    recorded: BaselineAgreement | None,
    *,
    model: str,
    prompt_sha256: str,
    size: int,
    seed: int,
) -> JudgeAgreement | None:
    """The agreement the tier's gating rests on: the record when it was measured for this
    judge model, prompt and seed; else measured now with ``judge``; else (no judge) the
    record marked stale. None when there is neither a record nor a pair to measure on."""
    if recorded is not None and (recorded.model, recorded.prompt_sha256, recorded.seed) == (
        model,
        prompt_sha256,
        seed,
    ):
        return _from_record(recorded, "recorded")
    if judge is None:
        if recorded is None:
            return None
        return _from_record(recorded, "stale")
    pairs = [p for p in agreement_sample(datasets, size=size, seed=seed) if p.doc_id in documents]
    if not pairs:
        return None
    judged = judge_sample(pairs, documents, judge)
    return JudgeAgreement(
        model=model,
        prompt_sha256=prompt_sha256,
        seed=seed,
        sample_size=judged.agreement.total,
        kappa=judged.agreement.kappa(),
        accuracy=judged.agreement.accuracy(),
        source="measured",
        cost_usd=judged.cost_usd,
        stopped=judged.stopped,
    )


def not_gating(
    agreement: JudgeAgreement | None,
    *,
    floor: float,
    key_set: bool,
    budget_out: bool,
    failed: bool = False,
) -> TierReason | None:
    """Why the tier may not decide the verdict, or None when it may. The first reason that
    holds, in the order a reader can act on: the key, the budget, the agreement."""
    if not key_set:
        return "no-key"
    if budget_out or (agreement is not None and agreement.stopped is not None):
        return "budget"
    if failed:
        return "judge-failed"
    if agreement is None:
        return "no-agreement"
    if agreement.source == "stale":
        return "stale"
    if agreement.kappa is None or agreement.kappa < floor:
        return "below-floor"
    return None


def recorded_agreement(agreement: JudgeAgreement | None) -> BaselineAgreement | None:
    """What the baseline keeps of an agreement: a stale or cut-short one is not kept."""
    if agreement is None or agreement.source == "stale" or agreement.stopped is not None:
        return None
    return BaselineAgreement(
        model=agreement.model,
        prompt_sha256=agreement.prompt_sha256,
        seed=agreement.seed,
        sample_size=agreement.sample_size,
        kappa=None if agreement.kappa is None else round(agreement.kappa, 12),
        accuracy=None if agreement.accuracy is None else round(agreement.accuracy, 12),
    )
