"""Candidate fixtures from a query log: queries grouped by their normalised text, a
sample that looks like the traffic (each stratum its share), and labels from clicks,
else from the retriever; every candidate is synthetic until reviewed."""

from __future__ import annotations

from collections import Counter

from hypothesis import given
from hypothesis import strategies as st

from retrieval_eval.author.query_import import (
    QueryGroup,
    candidate_fixture,
    group_queries,
    normalised,
    query_id,
    sample_groups,
)
from retrieval_eval.load.fixtures import Fixture


def test_spellings_of_one_query_are_one_group_shown_as_sent_most_often() -> None:
    groups = group_queries(
        [
            ("Rest  Dough", ("d1",), 1, {"lang": "en"}),
            ("rest dough", ("d2", "d1"), 3, {"lang": "en"}),
            ("ＲＥＳＴ dough ", (), 1, {"lang": "fr"}),
            ("salt water", (), 2, {}),
        ],
        stratify="lang",
    )
    assert [(g.text, g.frequency, g.clicks, g.stratum) for g in groups] == [
        ("rest dough", 5, ("d1", "d2"), "en"),
        ("salt water", 2, (), ""),
    ]
    assert normalised("ＲＥＳＴ\tDough ") == "rest dough"


def group(key: str, frequency: int, stratum: str | None = None) -> QueryGroup:
    return QueryGroup(key=key, text=key, frequency=frequency, clicks=(), stratum=stratum)


def test_the_sample_is_seeded_and_a_small_stratum_is_not_lost() -> None:
    groups = [group(f"web {n}", 100 - n, "web") for n in range(20)] + [group("app 0", 1, "app")]
    sample = sample_groups(groups, 5, seed=7)
    assert sample == sample_groups(list(reversed(groups)), 5, seed=7)
    assert len(sample) == 5
    assert [g.stratum for g in sample].count("app") == 1
    assert [g.frequency for g in sample] == sorted((g.frequency for g in sample), reverse=True)


def test_no_size_or_a_size_past_the_log_takes_every_group_by_frequency() -> None:
    groups = [group("b", 1), group("a", 3), group("c", 1)]
    assert [g.key for g in sample_groups(groups, None, seed=0)] == ["a", "b", "c"]
    assert [g.key for g in sample_groups(groups, 10, seed=0)] == ["a", "b", "c"]


@given(
    st.lists(
        st.tuples(st.integers(min_value=1, max_value=50), st.sampled_from(["a", "b", "c"])),
        min_size=1,
        max_size=30,
    ),
    st.integers(min_value=0, max_value=40),
    st.integers(),
)
def test_any_sample_has_its_size_each_group_once_and_every_stratum_when_it_can(
    drawn: list[tuple[int, str]], size: int, seed: int
) -> None:
    groups = [group(f"q{n}", frequency, stratum) for n, (frequency, stratum) in enumerate(drawn)]
    sample = sample_groups(groups, size, seed)
    assert len(sample) == min(size, len(groups))
    assert len({g.key for g in sample}) == len(sample)
    strata = Counter(g.stratum for g in groups)
    if len(sample) >= len(strata):
        assert {g.stratum for g in sample} == set(strata)


def test_clicks_in_the_corpus_are_the_labels_else_the_retrievers_hits() -> None:
    clicked = QueryGroup("rest dough", "Rest dough", 4, ("gone", "d2", "d1"), "en")
    record, source = candidate_fixture(  # type: ignore[misc]
        clicked,
        retrieval_type="semantic",
        known_ids=lambda doc_id: doc_id != "gone",
        top_hits=lambda text: ["h1"],
        stratify="lang",
    )
    assert source == "clicks"
    assert record["expected_top_k_ids"] == ["d2", "d1"]
    assert record["tags"] == ["lang:en"]
    assert record["query_id"] == query_id(clicked) and record["query_id"].startswith("log-")
    fixture = Fixture.model_validate(record)
    assert fixture.ground_truth_source == "synthetic"

    unclicked = QueryGroup("salt", "salt", 1, (), None)
    record, source = candidate_fixture(  # type: ignore[misc]
        unclicked,
        retrieval_type="keyword",
        known_ids=lambda doc_id: True,
        top_hits=lambda text: ["h1", "h1", "h2"],
        stratify=None,
    )
    assert (source, record["expected_top_k_ids"], "tags" in record) == (
        "retriever",
        ["h1", "h2"],
        False,
    )
    assert (
        candidate_fixture(
            unclicked,
            retrieval_type="keyword",
            known_ids=lambda doc_id: True,
            top_hits=lambda text: [],
            stratify=None,
        )
        is None
    )
