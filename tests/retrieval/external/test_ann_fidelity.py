"""The ANN fidelity measure the service retrievers share: mean recall of exact top k.
(The retrievers themselves are tested against real servers in test_postgres.py and
test_chroma_server.py.)"""

from __future__ import annotations

from collections.abc import Sequence

from hypothesis import given
from hypothesis import strategies as st

from retrieval_eval.retrieval.external.ann_fidelity import (
    Ranking,
    measure_fidelity,
    recall_of_exact,
)

DOCS = st.lists(st.sampled_from("abcdefghij"), unique=True, max_size=6)


@given(st.lists(st.tuples(DOCS, DOCS), min_size=1, max_size=8), st.integers(0, 10))
def test_the_mean_recall_over_the_sample_with_exact_answers(
    pairs: list[tuple[list[str], list[str]]], sample: int
) -> None:
    """Query i's approximate and exact answers are pairs[i]; a query whose exact answer
    is empty is left out; only the first ``sample`` queries count."""
    queries = [(str(i), ()) for i in range(len(pairs))]

    def answer(side: int) -> Ranking:
        return lambda query, tags, k: pairs[int(query)][side][:k]

    found = measure_fidelity(
        queries, 5, sample=sample, index="HNSW, test", approximate=answer(0), exact=answer(1)
    )
    counted = [len(set(a[:5]) & set(e[:5])) / len(e[:5]) for a, e in pairs[:sample] if e[:5]]
    if not counted:
        assert found is None
        return
    assert found is not None
    assert (found.index, found.k, found.queries) == ("HNSW, test", 5, len(counted))
    assert abs(found.recall - sum(counted) / len(counted)) < 1e-12
    assert 0.0 <= found.recall <= 1.0


@given(DOCS)
def test_finding_what_exact_search_finds_is_full_recall(exact: Sequence[str]) -> None:
    expected = 1.0 if exact else None
    assert recall_of_exact(list(reversed(exact)), exact) == expected
    assert recall_of_exact([], exact) == (0.0 if exact else None)


def test_nothing_is_measured_when_the_sample_is_zero() -> None:
    def everything(query: str, tags: Sequence[str], k: int) -> list[str]:
        return ["a"]

    queries = [("q", ())]
    assert (
        measure_fidelity(queries, 10, sample=0, index="x", approximate=everything, exact=everything)
        is None
    )
    one = measure_fidelity(
        queries, 10, sample=1, index="x", approximate=everything, exact=everything
    )
    assert one is not None and one.recall == 1.0
