"""Okapi BM25 with Lucene's formula, scored per chunk, ranked per document.

Scoring is bm25s's ``lucene`` method (idf = ln(1 + (N − df + 0.5)/(df + 0.5)),
tf part = tf / (tf + k1·(1 − b + b·len/avglen))), fed with our own documented
tokenizer. Why bm25s and not SQLite FTS5: FTS5 hard-codes k1=1.2, b=0.75, so the
Lucene/Anserini defaults could not even be expressed; why not our own: bm25s
precomputes the score matrix, so a query is a sparse row sum (numbers in
docs/benchmarks.md, "Retrievers").
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np

from retrieval_eval.errors import RetrievalEvalError
from retrieval_eval.index.chunking import chunk_corpus
from retrieval_eval.load.documents import Corpus
from retrieval_eval.retrieval.base import SearchResult
from retrieval_eval.retrieval.builtin.bm25s_import import import_bm25s
from retrieval_eval.retrieval.builtin.collapse import ChunkTable
from retrieval_eval.retrieval.builtin.tokenizer import KeywordTokenizer
from retrieval_eval.retrieval.config import Bm25Config

if TYPE_CHECKING:
    import bm25s
else:
    bm25s = import_bm25s()


class Bm25Retriever:
    name = "bm25"

    def __init__(self, config: Bm25Config):
        self.config = config
        self.tokenizer = KeywordTokenizer(stopwords=config.stopwords, stemming=config.stemming)
        self._table: ChunkTable | None = None
        self._model: bm25s.BM25 | None = None
        self._idf: dict[str, float] = {}
        self._unseen_idf = 0.0

    def index(self, corpus: Corpus) -> None:
        chunks = chunk_corpus(
            corpus, max_tokens=self.config.chunk_tokens, overlap=self.config.chunk_overlap
        )
        tokens = [self.tokenizer.tokenize(chunk.text) for chunk in chunks]
        self._model = None
        # bm25s cannot index a corpus without a single token (all stop words, or empty).
        if any(tokens):
            self._model = bm25s.BM25(
                k1=self.config.k1,
                b=self.config.b,
                method="lucene",
                backend="numpy",
                csc_backend="numpy",
            )
            self._model.index(tokens, show_progress=False)
            self._idf = _term_idf(self._model, len(tokens))
        self._unseen_idf = _lucene_idf(len(tokens), 0)
        self._table = ChunkTable(corpus, chunks)

    def search(self, query: str, k: int, tags: Sequence[str] = ()) -> SearchResult:
        if self._table is None:
            raise RetrievalEvalError("bm25: search() called before index()")
        table = self._table
        terms = self.tokenizer.tokenize(query)
        ceiling = self.score_ceiling(terms)
        if self._model is None:
            # nothing in the corpus can match any query
            return SearchResult(hits=(), score_ceiling=ceiling)
        mask = table.chunk_mask(tags)
        if mask is not None and not mask.any():
            # the empty-filter guard: never an unfiltered search
            return SearchResult(hits=(), score_ceiling=ceiling)
        token_ids = self._model.get_tokens_ids(terms)
        if not token_ids:
            return SearchResult(hits=(), score_ceiling=ceiling)
        scores = np.asarray(self._model.get_scores_from_ids(token_ids), dtype=np.float64)
        # A chunk sharing no term with the query scores 0: it is not a match, as in Lucene.
        matching = scores > 0
        if mask is not None:
            matching &= mask
        hits = table.top_documents(scores, np.flatnonzero(matching), k)
        return SearchResult(hits=hits, score_ceiling=ceiling)

    def score_ceiling(self, terms: Sequence[str]) -> float:
        """The highest score any chunk could reach for these query terms: Σ idf(t).

        Lucene's tf part, tf / (tf + k1·(1 − b + b·len/avglen)), stays below 1, so
        a term adds less than its idf. A repeated term counts each time, as in
        scoring; a term no chunk contains counts with the idf it would have
        (document frequency 0): the query asked for it and nothing matched it."""
        return sum(self._idf.get(term, self._unseen_idf) for term in terms)

    def describe(self) -> Mapping[str, object]:
        return {
            "retriever": self.name,
            "formula": "lucene",
            "k1": self.config.k1,
            "b": self.config.b,
            "tokenizer": self.tokenizer.describe(),
            "chunk_tokens": self.config.chunk_tokens,
            "chunk_overlap": self.config.chunk_overlap,
            "bm25s": bm25s.__version__,
        }


def _lucene_idf(documents: int, frequency: int) -> float:
    """idf(t) = ln(1 + (N − df + 0.5) / (df + 0.5)), as bm25s's ``lucene`` method."""
    return math.log1p((documents - frequency + 0.5) / (frequency + 0.5))


def _term_idf(model: bm25s.BM25, documents: int) -> dict[str, float]:
    """Every indexed term's idf, from the document frequencies in bm25s's score
    matrix (one column per term, one stored entry per chunk containing it). bm25s
    adds an empty-string entry to its vocabulary past the matrix's last column; no
    query term is empty, so it is skipped."""
    indptr = np.asarray(model.scores["indptr"])
    frequency = np.diff(indptr)
    idf = np.log1p((documents - frequency + 0.5) / (frequency + 0.5))
    return {
        term: float(idf[column]) for term, column in model.vocab_dict.items() if column < len(idf)
    }
