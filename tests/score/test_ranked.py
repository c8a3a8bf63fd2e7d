"""Rankings reduced to where the relevant documents landed: each relevant document's rank
and grade (a repeated document credited at its first position only, its copies still
taking their ranks), each query's count of results and of relevant documents, and its
ideal grades highest first. The same arrays a trec_eval-style loop over every query gives
(hypothesis)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from retrieval_eval.score.ranked import from_mappings

_docs = st.sampled_from(["a", "b", "c", "d", "e"])
_qrels = st.dictionaries(
    st.sampled_from(["q1", "q2", "q3"]), st.dictionaries(_docs, st.integers(0, 3)), max_size=3
)
_rankings = st.dictionaries(st.sampled_from(["q1", "q2", "q3", "q4"]), st.lists(_docs, max_size=8))


def test_a_worked_example() -> None:
    hits = from_mappings(
        {"q1": {"a": 2, "b": 1, "c": 0, "z": 3}, "q2": {"d": 1}},
        {"q1": ["c", "b", "b", "a"], "q2": []},
        ["q1", "q2", "q3"],
    )
    assert hits.num_queries == 3
    assert hits.num_ret.tolist() == [4, 0, 0]
    assert hits.num_rel.tolist() == [3, 1, 0]  # grade 0 is not relevant
    assert hits.hit_query.tolist() == [0, 0]
    assert hits.hit_rank.tolist() == [2, 4]  # b's copy at 3 earns nothing but keeps its rank
    assert hits.hit_gain.tolist() == [1.0, 2.0]
    assert hits.ideal_offsets.tolist() == [0, 3, 4, 4]
    assert hits.ideal_gains.tolist() == [3.0, 2.0, 1.0, 1.0]


@given(_qrels, _rankings)
def test_the_arrays_are_what_a_loop_over_every_query_gives(
    qrels: dict[str, dict[str, int]], rankings: dict[str, list[str]]
) -> None:
    query_ids = sorted(set(qrels) | set(rankings))
    hits = from_mappings(qrels, rankings, query_ids)
    expected_hits: list[tuple[int, int, float]] = []
    ideal: list[float] = []
    for index, qid in enumerate(query_ids):
        relevant = {d: g for d, g in qrels.get(qid, {}).items() if g >= 1}
        ranking = rankings.get(qid, [])
        assert hits.num_ret[index] == len(ranking)
        assert hits.num_rel[index] == len(relevant)
        seen: set[str] = set()
        for position, doc in enumerate(ranking, 1):
            if doc in relevant and doc not in seen:
                expected_hits.append((index, position, float(relevant[doc])))
            seen.add(doc)
        start, end = hits.ideal_offsets[index], hits.ideal_offsets[index + 1]
        assert hits.ideal_gains[start:end].tolist() == sorted(
            map(float, relevant.values()), reverse=True
        )
        ideal += sorted(map(float, relevant.values()), reverse=True)
    found = list(
        zip(hits.hit_query.tolist(), hits.hit_rank.tolist(), hits.hit_gain.tolist(), strict=True)
    )
    assert found == expected_hits
    assert hits.ideal_gains.tolist() == ideal
