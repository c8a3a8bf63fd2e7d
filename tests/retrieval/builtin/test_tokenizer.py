from __future__ import annotations

import pytest

from retrieval_eval.retrieval.builtin.tokenizer import ENGLISH_STOPWORDS, KeywordTokenizer
from retrieval_eval.retrieval.config import Bm25Config


def test_lowercases_splits_on_non_word_characters_and_drops_stop_words() -> None:
    tokens = KeywordTokenizer().tokenize("The State-of-the-Art café, in São Paulo (2024)!")
    assert tokens == ["state", "art", "café", "são", "paulo", "2024"]


@pytest.mark.parametrize(
    ("tail", "more"),
    [
        ("", []),  # ASCII only
        (" \u212a", ["k"]),  # the Kelvin sign, whose lowercase is ASCII "k"
        (" Café", ["café"]),  # a word outside ASCII
    ],
)
def test_a_word_is_a_run_of_word_characters_whatever_the_script(tail: str, more: list[str]) -> None:
    text = "snake_case x\x1fy\tz 3.14 C++ e-mail\x00end" + tail
    tokens = KeywordTokenizer(stopwords=False).tokenize(text)
    assert tokens == ["snake_case", "x", "y", "z", "3", "14", "c", "e", "mail", "end", *more]


def test_stop_words_can_be_kept() -> None:
    assert KeywordTokenizer(stopwords=False).tokenize("Is it the end?") == [
        "is",
        "it",
        "the",
        "end",
    ]


def test_stemming_uses_snowball_english() -> None:
    tokens = KeywordTokenizer(stemming=True).tokenize("Deploying releases deployed quickly")
    assert tokens == ["deploy", "releas", "deploy", "quick"]


def test_the_stop_list_is_lucenes_33_english_words() -> None:
    assert len(ENGLISH_STOPWORDS) == 33
    assert {"a", "the", "with", "will", "such"} <= ENGLISH_STOPWORDS
    assert "what" not in ENGLISH_STOPWORDS


def test_the_longer_english_list_drops_question_words_too() -> None:
    # "what", "how" and "when" are not in Lucene's 33 words but are in the 179-word "en" list.
    assert KeywordTokenizer().tokenize("What is the cost and how much") == [
        "what",
        "cost",
        "how",
        "much",
    ]
    assert KeywordTokenizer(stopwords="en").tokenize("What is the cost and how much") == [
        "cost",
        "much",
    ]
    assert KeywordTokenizer(stopwords="en").describe()["stopwords"] == "english-179"


def test_bm25_accepts_en_and_refuses_other_lists() -> None:
    from pydantic import ValidationError

    from retrieval_eval.retrieval.config import Bm25Config

    assert Bm25Config(stopwords="en").stopwords == "en"
    with pytest.raises(ValidationError):
        Bm25Config(stopwords="fr")  # type: ignore[arg-type]


def test_the_stop_word_lists_have_unambiguous_names() -> None:
    """ "en" is bm25s's name for the 33-word list but was ours for the 179-word one: the
    lists are now "lucene" and "en-179"; "en" keeps meaning the 179 words."""
    assert Bm25Config(stopwords="lucene").stopwords == "lucene"
    assert Bm25Config(stopwords="en-179").stopwords == "en-179"
    text = "What is the cost and how much"
    assert KeywordTokenizer(stopwords="lucene").tokenize(text) == KeywordTokenizer().tokenize(text)
    assert KeywordTokenizer(stopwords="en-179").tokenize(text) == ["cost", "much"]
    assert KeywordTokenizer(stopwords="en").tokenize(text) == ["cost", "much"]
    assert KeywordTokenizer(stopwords="lucene").describe()["stopwords"] == "lucene-english-33"
    assert KeywordTokenizer(stopwords="en-179").describe()["stopwords"] == "english-179"
