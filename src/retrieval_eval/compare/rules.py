"""The gate's rules: paired per-query values and the policy in, a judgement out.

Pure functions of numbers (no reports, no files), so a benchmark can apply the product's
own rule to drawn golden sets and check its vectorised simulation against it. A rule reads
the relative drop of the mean over the queries both runs share, and, when it tests, the
paired sign-flip test on the per-query differences (score/stats.py). Gains are judged by
the mirror of the same rule, so a change is "improved" only when its gain is as clear as a
drop must be to fail.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from retrieval_eval.results import GatePolicy, RuleSpec
from retrieval_eval.score.ranked import FloatArray
from retrieval_eval.score.stats import Alternative, sign_flip_p_value
from retrieval_eval.vocabulary import LOWER_IS_BETTER

# Differences below this are float noise (summation order, rounding in baseline.json),
# never a regression or an improvement.
TIE_EPSILON = 1e-9

Outcome = Literal["fail", "noise", "review", "improved", "pass"]


@dataclass(frozen=True)
class Judgement:
    """What a rule made of one metric's paired values.

    ``outcome``: "fail" (a regression), "noise" (a drop or gain beyond the bound whose test
    says it may be chance), "review" (a drop in the review band: flagged, not failed),
    "improved" (a gain by the mirror of the rule), "pass"."""

    outcome: Outcome
    drop: float  # relative drop of the mean (negative: a gain)
    p_value: float | None = None  # the test that decided, when one did


def relative_drop(metric: str, baseline: float, current: float) -> float:
    """How much worse, as a fraction of the baseline (negative when better)."""
    worse_by = current - baseline if metric in LOWER_IS_BETTER else baseline - current
    if abs(current - baseline) < TIE_EPSILON:
        return 0.0
    if baseline == 0:
        return float("inf") if worse_by > 0 else float("-inf")
    return worse_by / baseline


def judge_metric(
    baseline: Sequence[float] | FloatArray,
    current: Sequence[float] | FloatArray,
    *,
    metric: str,
    policy: GatePolicy,
    two_sided_p: float | None = None,
) -> Judgement:
    """One metric of one dataset under ``policy``'s rule. ``baseline[i]`` and ``current[i]``
    are query i's values in each run; ``two_sided_p`` is the paired test's p when the caller
    already has it (the report's), else it is computed here, in query order."""
    before = np.asarray(baseline, dtype=np.float64)
    after = np.asarray(current, dtype=np.float64)
    if before.size == 0:
        return Judgement("pass", 0.0)
    drop = relative_drop(metric, float(before.mean()), float(after.mean()))
    return judge_drop(
        drop, metric=metric, policy=policy, p_value=_Tests(before, after, policy.seed, two_sided_p)
    )


class _Tests:
    """The paired tests of one metric, each computed when a rule first asks for it."""

    def __init__(
        self, before: FloatArray, after: FloatArray, seed: int, two_sided: float | None
    ) -> None:
        self.before, self.after, self.seed = before, after, seed
        self._cache: dict[tuple[str, float], float] = {}
        if two_sided is not None:
            self._cache[("two-sided", 0.0)] = two_sided

    def __call__(self, alternative: Alternative, margin: float = 0.0) -> float:
        key = (alternative, margin)
        if key not in self._cache:
            # margin > 0: H0 "the current run is worse by the margin or more", as its mean
            # of current − (1 − margin)·baseline being at most 0.
            diffs = self.after - (1.0 - margin) * self.before
            self._cache[key] = sign_flip_p_value(diffs, seed=self.seed, alternative=alternative)
        return self._cache[key]


def judge_drop(
    drop: float, *, metric: str, policy: GatePolicy, p_value: _Tests | None
) -> Judgement:
    """The rule on an observed relative ``drop`` of ``metric``; ``p_value(alternative,
    margin)`` runs the paired test (None: there is none, as for latency and cost, judged by
    the drop alone)."""
    spec = policy.spec
    tolerance = policy.tolerance_for(metric)
    alpha, significance = policy.alpha, policy.significance
    lower_is_better = metric in LOWER_IS_BETTER
    if not np.isfinite(drop) and drop < 0:
        return Judgement("improved", drop)
    fail_bound = spec.fail_over * tolerance
    # Which way is "worse" for the test: a quality metric falls, latency and cost rise.
    worse: Alternative = "greater" if lower_is_better else "less"
    better: Alternative = "less" if lower_is_better else "greater"
    beyond = drop > fail_bound + TIE_EPSILON
    tested = p_value is not None
    if spec.test == "non-inferiority" and tested and alpha is not None and not lower_is_better:
        assert p_value is not None
        if beyond:
            p = p_value("greater", tolerance)
            if p >= alpha:
                return Judgement("fail", drop, p)
            return Judgement("noise", drop, p)
    elif beyond:
        p = None
        if tested and spec.test == "one-sided" and alpha is not None:
            assert p_value is not None
            p = p_value(worse)
            if p >= alpha:
                return Judgement("noise", drop, p)
        elif tested and spec.test == "two-sided" and significance is not None:
            assert p_value is not None
            p = p_value("two-sided")
            if p >= significance:
                return Judgement("noise", drop, p)
        return Judgement("fail", drop, p)
    if (
        spec.tested_over is not None
        and tested
        and alpha is not None
        and drop > spec.tested_over * tolerance + TIE_EPSILON
    ):
        assert p_value is not None
        p = p_value(worse)
        if p < alpha:
            return Judgement("fail", drop, p)
    if spec.review_over is not None and drop > spec.review_over * tolerance + TIE_EPSILON:
        return Judgement("review", drop)
    return _gain(drop, spec, tolerance, alpha, significance, p_value, better)


def _gain(
    drop: float,
    spec: RuleSpec,
    tolerance: float,
    alpha: float | None,
    significance: float | None,
    p_value: _Tests | None,
    better: Alternative,
) -> Judgement:
    """A gain is "improved" by the mirror of the rule: beyond the bound a drop fails at
    (the tolerance for a rule that fails on any drop), and as clear by the same test."""
    gain = -drop
    bound = (spec.fail_over if spec.fail_over > 0 else 1.0) * tolerance
    if gain <= TIE_EPSILON or gain <= bound + TIE_EPSILON:
        return Judgement("pass", drop)
    if p_value is None:
        return Judgement("improved", drop)
    if spec.test == "two-sided" and significance is not None:
        p = p_value("two-sided")
        return Judgement("improved" if p < significance else "noise", drop, p)
    if spec.test in ("one-sided", "non-inferiority") and alpha is not None:
        p = p_value(better)
        return Judgement("improved" if p < alpha else "noise", drop, p)
    return Judgement("improved", drop)


@dataclass(frozen=True)
class Pooled:
    """The rule on every dataset's headline values pooled (judge_pooled), for the verdict."""

    judgement: Judgement
    metric: str
    datasets: int
    queries: int


@dataclass(frozen=True)
class RuleOutcome:
    """The rule over a whole run: each (dataset, metric) judged, and the pooled headline."""

    judgements: Mapping[tuple[str, str], Judgement]
    pooled: Judgement | None

    @property
    def failed(self) -> bool:
        pooled = self.pooled is not None and self.pooled.outcome == "fail"
        return pooled or any(j.outcome == "fail" for j in self.judgements.values())


def judge_run(
    datasets: Mapping[str, Mapping[str, tuple[Sequence[float], Sequence[float]]]],
    policy: GatePolicy,
) -> RuleOutcome:
    """The rule on paired values: dataset -> metric -> (baseline values, current values),
    each query at the same position on both sides. Only the metrics the policy gates for
    a dataset are judged; the pooled headline when the rule pools and there are several."""
    judgements = {
        (name, metric): judge_metric(before, after, metric=metric, policy=policy)
        for name, metrics in datasets.items()
        for metric, (before, after) in metrics.items()
        if policy.is_gated(metric, name)
    }
    heads = [
        metrics[policy.headline_for(name)]
        for name, metrics in datasets.items()
        if policy.headline_for(name) in metrics
    ]
    pooled = judge_pooled(heads, policy)
    if pooled is not None:
        # The pool decides; a dataset's own failing headline is flagged for review.
        judgements = {
            key: pooled_out(judgement) if key[1] == policy.headline_for(key[0]) else judgement
            for key, judgement in judgements.items()
        }
    return RuleOutcome(judgements, pooled)


def pooled_out(judgement: Judgement) -> Judgement:
    """A dataset's own judgement once the pooled one decides: a fail becomes "review"."""
    if judgement.outcome != "fail":
        return judgement
    return Judgement("review", judgement.drop, judgement.p_value)


def judge_pooled(
    heads: Sequence[tuple[Sequence[float], Sequence[float]]], policy: GatePolicy
) -> Judgement | None:
    """Every dataset's headline values as one set (each query weighs one), so that datasets
    that each fall a little fail together (three down 8% each are one 8% drop over three
    times the queries). None unless the rule pools and there are at least two datasets."""
    if not policy.spec.pooled or len(heads) < 2:
        return None
    before = np.concatenate([np.asarray(b, dtype=np.float64) for b, _ in heads])
    after = np.concatenate([np.asarray(a, dtype=np.float64) for _, a in heads])
    return judge_metric(before, after, metric=policy.headline, policy=policy)
