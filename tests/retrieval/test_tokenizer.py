from __future__ import annotations

from retrieval_eval.retrieval.tokenizer import ENGLISH_STOPWORDS, KeywordTokenizer


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
