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
MEMO_WORDS = 1_000_000  # distinct words a tokenizer remembers the token of
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
        # Every word met so far -> its token (its stem, or itself), or None for a stop word:
        # rules 3 and 4 become one dictionary look-up per word, and each distinct word is
        # stemmed once. Tokenizing Cranfield's 1,398 documents took about 0.07 CPU-second
        # with a stop-word test and PyStemmer's own cache per word, 0.045 with this. Past
        # MEMO_WORDS distinct words (a huge corpus's long tail) new words are not kept.
        self._tokens: dict[str, str | None] = {}

    def tokenize(self, text: str) -> list[str]:
        words = WORD.findall(text.lower())
        tokens = self._tokens
        try:
            return [token for word in words if (token := tokens[word]) is not None]
        except KeyError:
            if len(tokens) >= MEMO_WORDS:
                return self._tokens_of([word for word in words if word not in self._dropped])
            new = [word for word in dict.fromkeys(words) if word not in tokens]
            kept = [word for word in new if word not in self._dropped]
            tokens.update(dict.fromkeys(new))
            tokens.update(zip(kept, self._tokens_of(kept), strict=True))
            return [token for word in words if (token := tokens[word]) is not None]

    def _tokens_of(self, words: list[str]) -> list[str]:
        """Rule 4 for words that are no stop words."""
        if self._stemmer is None:
            return words
        stems: list[str] = self._stemmer.stemWords(words)
        return stems

    def describe(self) -> dict[str, object]:
        return {
            "lowercase": True,
            "split": r"\w+",
            "stopwords": self._list_name,
            "stemmer": "snowball-english" if self.stemming else None,
        }
