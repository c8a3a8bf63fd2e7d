from __future__ import annotations

import pytest

from retrieval_eval.retrieval.builtin.tokenizer import ENGLISH_STOPWORDS, KeywordTokenizer


def test_lowercases_splits_on_non_word_characters_and_drops_stop_words() -> None:
    tokens = KeywordTokenizer().tokenize("The State-of-the-Art café, in São Paulo (2024)!")
    assert tokens == ["state", "art", "café", "são", "paulo", "2024"]


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
