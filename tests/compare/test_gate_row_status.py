"""A metric row's status as a table: every branch of compare/gate.py's row_status on hand-built
inputs, one row each (test_gate.py runs the gate end to end with real retrievers).
"""

from __future__ import annotations

import pytest

from retrieval_eval.compare.gate import row_status
from retrieval_eval.compare.rules import judge_drop
from retrieval_eval.results import GatePolicy
from retrieval_eval.settings import Threshold
from retrieval_eval.vocabulary import RowStatus

SEED = GatePolicy(rule="any-metric", tolerance=0.05, headline="mrr@10", gated=("mrr@10",))
FLOOR = Threshold(min=0.5)  # passes at 0.6, fails at 0.4
CEILING = Threshold(max=500.0)  # a latency ceiling: fails at 600


@pytest.mark.parametrize(
    ("drop", "gated", "threshold", "current", "has_baseline", "expected"),
    [
        # A gated drop beyond the 5% tolerance regresses, whatever the threshold says.
        (0.10, True, FLOOR, 0.6, True, "regressed"),
        (0.10, True, None, 0.6, True, "regressed"),
        # At the tolerance (float noise included) it does not.
        (0.05, True, None, 0.6, True, "ok"),
        (0.05 + 1e-12, True, None, 0.6, True, "ok"),
        # An ungated drop never regresses; its threshold is its only gate.
        (0.50, False, FLOOR, 0.6, True, "ok"),
        (0.50, False, None, 0.6, True, "not-gated"),
        # A breached threshold, with or without a baseline.
        (None, True, FLOOR, 0.4, False, "below-threshold"),
        (0.00, True, FLOOR, 0.4, True, "below-threshold"),
        (None, False, CEILING, 600.0, False, "above-ceiling"),
        (0.01, False, CEILING, 600.0, True, "above-ceiling"),
        # No baseline value: new when the dataset has a baseline, ok when it is being set.
        (None, True, None, 0.6, True, "new"),
        (None, True, None, 0.6, False, "ok"),
        # A gain is labelled by the mirror of the rule: beyond the tolerance it is an
        # improvement, within it (as a drop within it is) ok.
        (-0.10, True, None, 0.6, True, "improved"),
        (-0.03, True, None, 0.6, True, "ok"),
        (-1e-12, True, None, 0.6, True, "ok"),
        (0.0, True, FLOOR, 0.6, True, "ok"),
    ],
)
def test_row_status(
    drop: float | None,
    gated: bool,
    threshold: Threshold | None,
    current: float,
    has_baseline: bool,
    expected: RowStatus,
) -> None:
    judgement = (
        None if drop is None else judge_drop(drop, metric="mrr@10", policy=SEED, p_value=None)
    )
    status = row_status(
        judgement,
        gated=gated,
        threshold=threshold,
        current=current,
        has_baseline=has_baseline,
    )
    assert status == expected
