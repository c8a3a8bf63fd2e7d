"""What a dataset can resolve: the drop the gate catches four times in five at its size,
and how many queries would make the change's 95% interval as narrow as the tolerance.

Both come from the spread of the headline metric's paired per-query differences
(current − baseline) in the comparison itself. The power is a normal approximation of
the rule: the observed relative drop of the mean is taken as normal around the true drop,
with the standard error the differences show. Without a baseline (a first run,
``validate``, ``init``) the spread of the per-query values themselves stands in for the
spread of the differences: two runs of similar systems differ by about as much as
queries differ from each other when their scores are half correlated, a cautious guess.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from statistics import NormalDist

import numpy as np

from retrieval_eval.results import GatePolicy, Resolution

POWER = 0.8  # "four times in five"
_NOISE = 1e-9  # a spread below this is float noise: nothing moved
_Z_POWER = NormalDist().inv_cdf(POWER)
_Z_INTERVAL = NormalDist().inv_cdf(0.975)  # the 95% interval's half-width, in standard errors


def detectable_drop(policy: GatePolicy, metric: str, standard_error: float) -> float | None:
    """The true relative drop the rule fails with probability ``POWER``, when the observed
    relative drop has ``standard_error``; None when no drop short of 100% is caught so
    often."""
    spec = policy.spec
    tolerance = policy.tolerance_for(metric)
    se = max(standard_error, 0.0)
    alpha = policy.alpha
    bound = spec.fail_over * tolerance + _Z_POWER * se
    if spec.test == "two-sided" and policy.significance is not None:
        bound = max(bound, (NormalDist().inv_cdf(1 - policy.significance / 2) + _Z_POWER) * se)
    elif spec.test == "one-sided" and alpha is not None:
        bound = max(bound, (NormalDist().inv_cdf(1 - alpha) + _Z_POWER) * se)
    elif spec.test == "non-inferiority" and alpha is not None:
        bound = max(bound, tolerance + (_Z_POWER - NormalDist().inv_cdf(1 - alpha)) * se)
    if spec.tested_over is not None and alpha is not None:
        tested = max(
            spec.tested_over * tolerance + _Z_POWER * se,
            (NormalDist().inv_cdf(1 - alpha) + _Z_POWER) * se,
        )
        bound = min(bound, tested)
    return bound if bound < 1.0 else None


def resolution_of(
    baseline: Sequence[float] | np.ndarray,
    current: Sequence[float] | np.ndarray | None,
    *,
    metric: str,
    policy: GatePolicy,
    interval: tuple[float, float] | None = None,
) -> Resolution | None:
    """The resolution of one dataset's ``metric``: from its paired values when ``current``
    is given (``interval`` is the paired bootstrap interval of the mean difference, when
    the report has it), else from the spread of ``baseline`` alone. None without a query or
    with a mean of 0 (a relative change of nothing)."""
    before = np.asarray(baseline, dtype=np.float64)
    n = int(before.size)
    mean = float(before.mean()) if n else 0.0
    if n == 0 or mean <= 0:
        return None
    tolerance = policy.tolerance_for(metric)
    if current is None:
        spread = float(before.std(ddof=1)) if n > 1 else 0.0
        source = "spread"
        change = low = high = None
    else:
        diffs = np.asarray(current, dtype=np.float64) - before
        spread = float(diffs.std(ddof=1)) if n > 1 else 0.0
        source = "comparison"
        change = float(diffs.mean()) / mean
        if interval is not None:
            low, high = interval[0] / mean, interval[1] / mean
        else:
            half = _Z_INTERVAL * spread / math.sqrt(n)
            low, high = change - half / mean, change + half / mean
        if spread < _NOISE:
            # Nothing moved: the runs say nothing about how much queries vary, so the
            # per-query values themselves stand in.
            spread = float(before.std(ddof=1)) if n > 1 else 0.0
            source = "spread"
    relative_spread = spread / mean
    standard_error = relative_spread / math.sqrt(n)
    needed = None
    if relative_spread > 0 and tolerance > 0:
        needed = math.ceil((_Z_INTERVAL * relative_spread / tolerance) ** 2)
    return Resolution(
        metric=metric,
        queries=n,
        source=source,
        detectable_drop=detectable_drop(policy, metric, standard_error),
        queries_to_resolve=needed,
        tolerance=tolerance,
        change=change,
        change_low=low,
        change_high=high,
    )
