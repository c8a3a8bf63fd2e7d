"""The keyword tokenizer shared by ``bm25`` and ``like``.

Documented in docs/retrievers.md because scores depend on every rule here:

1. lowercase (``str.lower``);
2. split into Unicode word runs (``\\w+``: letters, digits and ``_`` in any script;
   everything else separates words, so ``state-of-the-art`` is four words);
3. drop English stop words — Lucene's 33-word ``EnglishAnalyzer`` list, the
   one Anserini's BEIR baselines use (also ``bm25s.stopwords.STOPWORDS_EN``, which
   bm25s calls "en"), or with ``stopwords = "en-179"`` bm25s's 179-word
   ``STOPWORDS_EN_PLUS``;
4. optionally stem with the Snowball English stemmer (PyStemmer).
"""

from __future__ import annotations

import re

import Stemmer

from retrieval_eval.retrieval.builtin.bm25s_import import import_bm25s

STOPWORDS_EN = import_bm25s().stopwords.STOPWORDS_EN
STOPWORDS_EN_PLUS = import_bm25s().stopwords.STOPWORDS_EN_PLUS

WORD = re.compile(r"\w+")
# Every ASCII character ``\w`` does not match, to a space: an ASCII text's words are then
# what ``str.split`` returns (rule 2 exactly; the table is built from WORD itself), found in
# 0.6 of findall's time (Cranfield's 1,398 documents: 21 CPU-milliseconds instead of 36).
_ASCII_SEPARATORS = {code: " " for code in range(128) if WORD.fullmatch(chr(code)) is None}
ENGLISH_STOPWORDS: frozenset[str] = frozenset(STOPWORDS_EN)
# bm25s's 179-word English list (NLTK's, which includes Lucene's 33).
ENGLISH_STOPWORDS_LONG: frozenset[str] = frozenset(STOPWORDS_EN_PLUS)
# The names `stopwords` accepts for each list, and the name describe() reports it by.
# "en" is the 179-word list's former name, kept so configurations that use it still
# work; bm25s's own "en" is the 33-word list, hence the unambiguous names.
STOPWORD_LISTS: dict[bool | str, tuple[str, frozenset[str]]] = {
    True: ("lucene-english-33", ENGLISH_STOPWORDS),
    "lucene": ("lucene-english-33", ENGLISH_STOPWORDS),
    "en-179": ("english-179", ENGLISH_STOPWORDS_LONG),
    "en": ("english-179", ENGLISH_STOPWORDS_LONG),
}


class KeywordTokenizer:
    def __init__(self, *, stopwords: bool | str = True, stemming: bool = False):
        self.stopwords = stopwords
        named = STOPWORD_LISTS.get(stopwords) if stopwords is not False else None
        if stopwords is not False and named is None:
            raise ValueError(f"unknown stop word list {stopwords!r}")
        self._list_name = named[0] if named else None
        self._dropped: frozenset[str] = named[1] if named else frozenset()
        self.stemming = stemming
        self._stemmer = Stemmer.Stemmer("english") if stemming else None

    def tokenize(self, text: str) -> list[str]:
        lowered = text.lower()
        if lowered.isascii():
            words = lowered.translate(_ASCII_SEPARATORS).split()
        else:
            words = WORD.findall(lowered)
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
            "stopwords": self._list_name,
            "stemmer": "snowball-english" if self.stemming else None,
        }
