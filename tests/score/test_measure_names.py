from __future__ import annotations

import pytest

from retrieval_eval.errors import ConfigError
from retrieval_eval.score.measure_names import parse_measure


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("mrr@10", "mrr@10"),
        ("MRR@10", "mrr@10"),
        ("mrr", "mrr"),
        ("ndcg@10", "ndcg@10"),
        ("p@5", "p@5"),
        ("recall@100", "recall@100"),
        ("map", "map"),
        ("map@10", "map@10"),
        ("hit_rate@3", "hit_rate@3"),
        ("r_precision", "r_precision"),
    ],
)
def test_parse_measure_canonical_names(text: str, name: str) -> None:
    assert parse_measure(text).name == name


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "ndcg",
            "measure 'ndcg' needs a cut-off, e.g. ndcg@10; accepted: mrr, mrr@K, ndcg@K, p@K, "
            "recall@K, map, map@K, hit_rate@K, r_precision (K >= 1)",
        ),
        ("p@0", "measure 'p@0' has cut-off 0; cut-offs start at 1"),
        (
            "r_precision@5",
            "unknown measure 'r_precision@5'; accepted: mrr, mrr@K, ndcg@K, p@K, recall@K, "
            "map, map@K, hit_rate@K, r_precision (K >= 1)",
        ),
        (
            "precision@5",
            "unknown measure 'precision@5'; accepted: mrr, mrr@K, ndcg@K, p@K, recall@K, "
            "map, map@K, hit_rate@K, r_precision (K >= 1)",
        ),
    ],
)
def test_parse_measure_errors_name_the_input_and_the_accepted_forms(
    text: str, message: str
) -> None:
    with pytest.raises(ConfigError) as error:
        parse_measure(text)
    assert str(error.value) == message


def test_every_measure_has_one_record_that_names_its_label_trec_name_and_kernel() -> None:
    from retrieval_eval.score.measure_names import MEASURES, Measure, metric_label, trec_shared

    assert metric_label("ndcg@10") == "NDCG@10"
    assert metric_label("hit_rate@3") == "HitRate@3"
    assert metric_label("r_precision") == "R-Precision"
    assert metric_label("latency_p95_ms") == "Latency p95 (ms)"
    assert metric_label("some_new@4") == "some new@4"
    assert trec_shared("ndcg_cut", 10) == Measure("ndcg", 10)
    assert trec_shared("recip_rank", None) == Measure("mrr")
    assert trec_shared("map_cut", 5) == Measure("map", 5)
    assert trec_shared("bpref", None) is None
    for kind, record in MEASURES.items():
        assert record.kind == kind and callable(record.kernel)
        if record.ours:
            k = None if record.cut != "required" else 3
            assert parse_measure(Measure(kind, k).name) == Measure(kind, k)
        else:
            with pytest.raises(ConfigError):
                parse_measure(kind)
