"""Score ranked results against graded judgments, per query.

Every run scores its datasets with it (``measurements.py``, for ``run``, the shards and the
Action alike), and so do ``beir`` and ``tune``.

Which queries count differs from trec_eval on purpose. trec_eval averages over
the queries present in both qrels and run (unless ``-c``), so a retriever that
returns nothing for a hard query *improves* its mean by dropping it. Here every
query of ``qrels`` with at least one relevant document counts, and a missing or
empty ranking scores 0. Queries with no relevant document are left out: in a
golden dataset those are ``expect_empty`` fixtures, which pass or fail on their
own assertion rather than being averaged in.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from retrieval_eval.score.measure_names import compute, parse_measure
from retrieval_eval.score.ranked import from_mappings


def score_queries(
    qrels: Mapping[str, Mapping[str, int]],
    rankings: Mapping[str, Sequence[str]],
    measures: Sequence[str],
) -> dict[str, dict[str, float]]:
    """Measure name (canonical, e.g. ``ndcg@10``) -> query id -> value.

    ``rankings`` holds document ids best first; rank i is position i + 1, no re-sorting.
    Raises ConfigError for a measure name we do not know.
    """
    parsed = [parse_measure(name) for name in measures]
    query_ids = [
        qid for qid, judged in qrels.items() if any(grade >= 1 for grade in judged.values())
    ]
    hits = from_mappings(qrels, rankings, query_ids)
    results: dict[str, dict[str, float]] = {}
    for measure in parsed:
        values = compute(hits, measure)
        results[measure.name] = dict(zip(query_ids, values.tolist(), strict=True))
    return results
