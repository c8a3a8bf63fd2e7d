"""The gate's policy, built once from the settings: every knob that decides the verdict.

The run builds it at its start and hands it to the gate, the verdict, the staleness check
and the renderers; none of them reads a tolerance or a rule from the settings on its own.
"""

from __future__ import annotations

from collections.abc import Sequence

from retrieval_eval.results import GatePolicy
from retrieval_eval.settings import RunSettings


def default_headline(measures: Sequence[str]) -> str:
    """The metric a dataset is named by when the settings name none: NDCG at its first
    cut-off (it weighs every relevant document by its rank and grade), else the first
    measure."""
    return next((m for m in measures if m.startswith("ndcg@")), measures[0])


def gate_policy(settings: RunSettings) -> GatePolicy:
    return GatePolicy(
        rule=settings.gate_rule,
        tolerance=settings.tolerance,
        tolerances=dict(settings.tolerances),
        headline=settings.headline or default_headline(settings.measures),
        dataset_headlines=dict(settings.dataset_headlines),
        gated=tuple(m for m in (settings.gated or ()) if settings.is_gated(m)),
        significance=settings.significance,
        max_regressed_queries=settings.max_regressed_queries,
        max_removed_share=settings.max_removed_share,
        repeats=settings.repeats,
        seed=settings.seed,
    )
