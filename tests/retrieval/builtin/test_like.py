from __future__ import annotations

import pytest

from retrieval_eval.load.documents import Corpus, Document
from retrieval_eval.retrieval.builtin.like import LikeRetriever
from retrieval_eval.retrieval.config import LikeConfig


def _index(corpus: Corpus) -> LikeRetriever:
    retriever = LikeRetriever(LikeConfig())
    retriever.index(corpus)
    return retriever


def _ids(
    retriever: LikeRetriever, query: str, k: int = 10, tags: tuple[str, ...] = ()
) -> list[str]:
    return [hit.doc_id for hit in retriever.search(query, k, tags).hits]


def test_notes_rank_by_how_many_query_words_they_contain(notes: Corpus) -> None:
    retriever = _index(notes)
    hits = retriever.search("pesto pasta for the Lisbon trip", 10).hits
    # journal has pesto, pasta, lisbon, trip; lisbon note has lisbon, trip; pesto note has pesto
    assert [(h.doc_id, h.score) for h in hits] == [
        ("journal/2024-05-02", 4.0),
        ("travel/lisbon", 2.0),
        ("recipes/pesto", 1.0),
    ]


def test_words_match_as_substrings_in_title_or_body_ignoring_ascii_case() -> None:
    corpus = Corpus(
        (
            Document("a", "FLAVORFUL stew", "slow cooked"),
            Document("b", "notes", "no match here"),
            Document("c", "", "Flavor of the month"),
        ),
        "c",
    )
    assert _ids(_index(corpus), "flavor") == ["a", "c"]


def test_stop_words_do_not_count_as_hits() -> None:
    corpus = Corpus((Document("a", "", "the and of"), Document("b", "", "turbine")), "s")
    assert _ids(_index(corpus), "the turbine") == ["b"]


def test_a_repeated_query_word_counts_once() -> None:
    corpus = Corpus((Document("a", "", "wing wing"), Document("b", "", "wing flap")), "r")
    hits = _index(corpus).search("wing wing flap", 10).hits
    assert [(h.doc_id, h.score) for h in hits] == [("b", 2.0), ("a", 1.0)]


def test_ties_go_to_the_smaller_document_id_and_k_limits() -> None:
    corpus = Corpus(tuple(Document(i, "", "delta wing") for i in ("z", "b", "m")), "t")
    assert _ids(_index(corpus), "wing", k=2) == ["b", "m"]


def test_percent_and_underscore_in_a_query_word_are_literal() -> None:
    corpus = Corpus((Document("a", "", "snake_case name"), Document("b", "", "snakeXcase")), "e")
    assert _ids(_index(corpus), "snake_case") == ["a"]


def test_the_hit_text_is_the_whole_note() -> None:
    corpus = Corpus((Document("a", "Pesto", "Blend basil."),), "w")
    (hit,) = _index(corpus).search("basil", 5).hits
    assert hit.text == "Pesto\nBlend basil."


def test_tag_filter_or_semantics_and_the_empty_filter_guard(notes: Corpus) -> None:
    retriever = _index(notes)
    assert _ids(retriever, "pesto lisbon", tags=("travel",)) == ["travel/lisbon"]
    assert _ids(retriever, "pesto lisbon", tags=("travel", "recipes")) == [
        "recipes/pesto",
        "travel/lisbon",
    ]
    assert _ids(retriever, "pesto lisbon", tags=("no-such-tag",)) == []


@pytest.mark.parametrize("query", ["", "the of and", "?!"])
def test_a_query_with_no_usable_word_returns_nothing(notes: Corpus, query: str) -> None:
    assert _ids(_index(notes), query) == []


def test_an_empty_corpus_answers_with_nothing() -> None:
    assert _ids(_index(Corpus((), "empty")), "wing") == []
