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
