"""A retriever searched several times per query: each query's value is the mean of its
repeats, the spread says each repeat's dataset mean and how many queries moved between
repeats, and the shards' spreads merge to the unsharded run's."""

from __future__ import annotations

import pytest

from retrieval_eval.score.query_scores import score_queries
from retrieval_eval.score.repeats import merge_spreads, repeated_measures

QRELS = {"steady": {"a": 1}, "flaky": {"b": 1}, "never": {"c": 1}}
RUNS = [
    {"steady": ["a"], "flaky": ["b"], "never": ["x"]},
    {"steady": ["a"], "flaky": ["x", "b"], "never": ["x"]},
    {"steady": ["a"], "flaky": ["x", "y", "z", "w"], "never": []},
]


def test_each_query_is_the_mean_of_its_repeats_and_the_spread_is_reported() -> None:
    means, spread = repeated_measures(QRELS, RUNS, ["mrr@10"])
    assert means["mrr@10"] == pytest.approx({"steady": 1.0, "flaky": 0.5, "never": 0.0})
    assert spread.runs == 3
    assert spread.means["mrr@10"] == pytest.approx((2 / 3, 1.5 / 3, 1 / 3))
    assert spread.varied == {"mrr@10": 1}  # only "flaky" moved


def test_shards_merge_to_the_unsharded_spread() -> None:
    _, whole = repeated_measures(QRELS, RUNS, ["mrr@10"])
    first = {"steady": QRELS["steady"]}
    rest = {"flaky": QRELS["flaky"], "never": QRELS["never"]}
    _, one = repeated_measures(first, RUNS, ["mrr@10"])
    _, two = repeated_measures(rest, RUNS, ["mrr@10"])
    merged = merge_spreads([(one, 1), (two, 2)])
    assert merged is not None
    assert merged.means["mrr@10"] == pytest.approx(whole.means["mrr@10"])
    assert merged.varied == whole.varied
    assert merge_spreads([]) is None


def test_one_repeat_is_the_plain_score() -> None:
    means, spread = repeated_measures(QRELS, RUNS[:1], ["mrr@10"])
    assert means == score_queries(QRELS, RUNS[0], ["mrr@10"])
    assert spread.varied == {"mrr@10": 0}
