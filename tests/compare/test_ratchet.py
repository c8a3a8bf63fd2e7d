"""The ratchet's arithmetic: each gated metric keeps the better side, and only as a whole."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from retrieval_eval.action.inputs import load_action_settings
from retrieval_eval.compare.baseline import BaselineDataset, BaselineQuery
from retrieval_eval.compare.ratchet import ratchet_entry
from retrieval_eval.errors import ConfigError
from retrieval_eval.vocabulary import LATENCY_P95
from tests.support.runner_env import runner_env

QUERIES = ("q1", "q2", "q3")
QUALITY = ("mrr@10", "ndcg@10")
scores = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)
ranks = st.one_of(st.none(), st.integers(min_value=1, max_value=10))


@st.composite
def entries(draw: st.DrawFn) -> BaselineDataset:
    queries = {
        q: BaselineQuery(
            query=f"query {q}",
            first_relevant_rank=draw(ranks),
            metrics={m: draw(scores) for m in QUALITY},
        )
        for q in QUERIES
    }
    aggregates: dict[str, float | None] = {
        m: sum((queries[q].metrics or {})[m] or 0.0 for q in QUERIES) / len(QUERIES)
        for m in QUALITY
    }
    aggregates[LATENCY_P95] = draw(st.floats(min_value=0.1, max_value=500.0))
    return BaselineDataset(
        retriever="bm25", k=10, measures=QUALITY, aggregates=aggregates, queries=queries
    )


@given(recorded=entries(), measured=entries(), gate_latency=st.booleans())
def test_nothing_gated_is_ever_lowered_and_per_query_values_follow_their_mean(
    recorded: BaselineDataset, measured: BaselineDataset, gate_latency: bool
) -> None:
    def gated(metric: str) -> bool:
        return metric in QUALITY or (gate_latency and metric == LATENCY_P95)

    entry, moved, reason = ratchet_entry("keyword.jsonl", recorded, measured, gated)

    assert reason is None
    assert entry.aggregates is not None and recorded.aggregates is not None
    assert measured.aggregates is not None and entry.queries is not None
    for metric in QUALITY:
        best = max(recorded.aggregates[metric] or 0.0, measured.aggregates[metric] or 0.0)
        assert abs((entry.aggregates[metric] or 0.0) - best) <= 1e-9  # ties are float noise
        # The baseline's per-query values still average to its aggregate.
        values = [(entry.queries[q].metrics or {})[metric] or 0.0 for q in QUERIES]
        assert abs(sum(values) / len(values) - (entry.aggregates[metric] or 0.0)) < 1e-9
    latency = entry.aggregates[LATENCY_P95]
    if gate_latency:
        best = min(recorded.aggregates[LATENCY_P95] or 0.0, measured.aggregates[LATENCY_P95] or 0.0)
        assert abs((latency or 0.0) - best) <= 1e-9
    else:
        assert latency == recorded.aggregates[LATENCY_P95]
    assert {(m.metric, m.before, m.after) for m in moved} == {
        (metric, recorded.aggregates[metric], entry.aggregates[metric])
        for metric in entry.aggregates
        if entry.aggregates[metric] != recorded.aggregates[metric]
    }
    assert entry.corruption(QUALITY) is None


def test_a_dataset_whose_queries_changed_is_held_with_the_reason() -> None:
    recorded = BaselineDataset(
        retriever="bm25",
        k=10,
        measures=("mrr@10",),
        aggregates={"mrr@10": 0.5},
        queries={"q1": BaselineQuery(metrics={"mrr@10": 0.5})},
    )
    measured = recorded.model_copy(
        update={
            "aggregates": {"mrr@10": 1.0},
            "queries": {"q2": BaselineQuery(metrics={"mrr@10": 1.0})},
        }
    )
    entry, moved, reason = ratchet_entry("keyword.jsonl", recorded, measured, lambda m: True)
    assert (entry, moved) == (recorded, [])
    assert reason == (
        "its queries changed since the baseline (1 added, 1 removed); "
        "run `retrieval-eval baseline update` to measure it anew"
    )


@given(value=st.text(max_size=20))
def test_the_baseline_update_input_accepts_fixed_ratchet_or_empty(value: str) -> None:
    env = runner_env(Path("/tmp/workspace"), baseline_update=value)
    if value.strip() in ("", "fixed", "ratchet"):
        overrides = load_action_settings(env).overrides
        assert overrides.get("baseline_update") == (value.strip() or None)
        return
    with pytest.raises(ConfigError) as caught:
        load_action_settings(env)
    assert "input `baseline-update`: accepts fixed | ratchet, got " in str(caught.value)
