"""The keyword tokenizer shared by ``bm25`` and ``like``.

Documented in docs/retrievers.md because scores depend on every rule here:

1. lowercase (``str.lower``);
2. split into Unicode word runs (``\\w+``: letters, digits and ``_`` in any script;
   everything else separates words, so ``state-of-the-art`` is four words);
3. drop English stop words — Lucene's 33-word ``EnglishAnalyzer`` list, the
   one Anserini's BEIR baselines use (also ``bm25s.stopwords.STOPWORDS_EN``);
4. optionally stem with the Snowball English stemmer (PyStemmer).
"""

from __future__ import annotations

import re

import Stemmer
from bm25s.stopwords import STOPWORDS_EN, STOPWORDS_EN_PLUS

WORD = re.compile(r"\w+")
ENGLISH_STOPWORDS: frozenset[str] = frozenset(STOPWORDS_EN)
# `stopwords = "en"`: bm25s's 179-word English list (NLTK's, which includes Lucene's 33).
ENGLISH_STOPWORDS_LONG: frozenset[str] = frozenset(STOPWORDS_EN_PLUS)


class KeywordTokenizer:
    def __init__(self, *, stopwords: bool | str = True, stemming: bool = False):
        self.stopwords = stopwords
        self._dropped: frozenset[str] = (
            ENGLISH_STOPWORDS_LONG
            if stopwords == "en"
            else ENGLISH_STOPWORDS
            if stopwords
            else frozenset()
        )
        self.stemming = stemming
        self._stemmer = Stemmer.Stemmer("english") if stemming else None

    def tokenize(self, text: str) -> list[str]:
        words = WORD.findall(text.lower())
        if self._dropped:
            words = [word for word in words if word not in self._dropped]
        if self._stemmer is not None:
            stems: list[str] = self._stemmer.stemWords(words)
            return stems
        return words

    def describe(self) -> dict[str, object]:
        return {
            "lowercase": True,
            "split": r"\w+",
            "stopwords": "english-179"
            if self.stopwords == "en"
            else "lucene-english-33"
            if self.stopwords
            else None,
            "stemmer": "snowball-english" if self.stemming else None,
        }
