"""The judged hits of a run (tools/trec/hits.py): relevance by level, gains by grade.

trec_eval counts a document as relevant when its grade reaches the relevance level
(``-l``), but its ndcg family gains the grade itself whatever the level, and a negative
grade (in the pool, unjudged) is never relevant.
"""

from __future__ import annotations

import numpy as np

from retrieval_eval.tools.trec.hits import TrecHits


def ints(*values: int) -> np.ndarray:
    return np.array(values, dtype=np.int64)


def two_queries() -> TrecHits:
    # Query 0 retrieved grades 2 (rank 1), 1 (rank 3) and -1 (rank 4) of its judgments
    # 2, 1, -1, 3; query 1 retrieved its only judgment, a 0, at rank 2.
    return TrecHits(
        query_ids=("a", "b"),
        num_ret=ints(5, 2),
        judged_query=ints(0, 0, 0, 1),
        judged_rank=ints(1, 3, 4, 2),
        judged_grade=ints(2, 1, -1, 0),
        qrels_query=ints(0, 0, 0, 0, 1),
        qrels_grade=ints(2, 1, -1, 3, 0),
        runid="tag",
    )


def test_relevant_judgments_per_level() -> None:
    hits = two_queries()
    assert hits.num_queries == 2
    assert hits.num_at_or_above(1).tolist() == [3, 0]
    assert hits.num_at_or_above(2).tolist() == [2, 0]
    assert hits.num_at_or_above(0).tolist() == [3, 1]  # the -1 never counts


def test_the_ranked_hits_keep_the_grades_as_gains_at_any_level() -> None:
    hits = two_queries()
    at_two = hits.ranked(2)
    assert at_two.hit_query.tolist() == [0]
    assert at_two.hit_rank.tolist() == [1]
    assert at_two.hit_gain.tolist() == [2.0]
    assert at_two.num_rel.tolist() == [2, 0]
    at_one = hits.ranked(1)
    assert at_one.hit_rank.tolist() == [1, 3]
    assert at_one.hit_gain.tolist() == [2.0, 1.0]
    # The ideal ranking: each query's positive grades, highest first.
    assert at_one.ideal_gains[at_one.ideal_offsets[0] : at_one.ideal_offsets[1]].tolist() == [
        3.0,
        2.0,
        1.0,
    ]
    assert hits.ranked(1) is at_one  # built once per level
