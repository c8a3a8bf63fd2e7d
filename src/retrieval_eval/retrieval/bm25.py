"""Okapi BM25 with Lucene's formula, scored per chunk, ranked per document.

Scoring is bm25s's ``lucene`` method (idf = ln(1 + (N − df + 0.5)/(df + 0.5)),
tf part = tf / (tf + k1·(1 − b + b·len/avglen))), fed with our own documented
tokenizer. Why bm25s and not SQLite FTS5: FTS5 hard-codes k1=1.2, b=0.75, so the
Lucene/Anserini defaults could not even be expressed; why not our own: bm25s
precomputes the score matrix, so a query is a sparse row sum (numbers in
docs/benchmarks.md, "Retrievers").
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import bm25s
import numpy as np

from retrieval_eval.errors import RetrievalEvalError
from retrieval_eval.index.chunking import chunk_corpus
from retrieval_eval.load.documents import Corpus
from retrieval_eval.retrieval.base import SearchResult
from retrieval_eval.retrieval.collapse import ChunkTable
from retrieval_eval.retrieval.config import Bm25Config
from retrieval_eval.retrieval.tokenizer import KeywordTokenizer


class Bm25Retriever:
    name = "bm25"

    def __init__(self, config: Bm25Config):
        self.config = config
        self.tokenizer = KeywordTokenizer(stopwords=config.stopwords, stemming=config.stemming)
        self._table: ChunkTable | None = None
        self._model: bm25s.BM25 | None = None

    def index(self, corpus: Corpus) -> None:
        chunks = chunk_corpus(
            corpus, max_tokens=self.config.chunk_tokens, overlap=self.config.chunk_overlap
        )
        tokens = [self.tokenizer.tokenize(chunk.text) for chunk in chunks]
        self._model = None
        # bm25s cannot index a corpus without a single token (all stop words, or empty).
        if any(tokens):
            self._model = bm25s.BM25(k1=self.config.k1, b=self.config.b, method="lucene")
            self._model.index(tokens, show_progress=False)
        self._table = ChunkTable(corpus, chunks)

    def search(self, query: str, k: int, tags: Sequence[str] = ()) -> SearchResult:
        if self._table is None:
            raise RetrievalEvalError("bm25: search() called before index()")
        table = self._table
        if self._model is None:
            return SearchResult(hits=())  # nothing in the corpus can match any query
        mask = table.chunk_mask(tags)
        if mask is not None and not mask.any():
            return SearchResult(hits=())  # the empty-filter guard: never an unfiltered search
        token_ids = self._model.get_tokens_ids(self.tokenizer.tokenize(query))
        if not token_ids:
            return SearchResult(hits=())
        scores = np.asarray(self._model.get_scores_from_ids(token_ids), dtype=np.float64)
        # A chunk sharing no term with the query scores 0: it is not a match, as in Lucene.
        matching = scores > 0
        if mask is not None:
            matching &= mask
        return SearchResult(hits=table.top_documents(scores, np.flatnonzero(matching), k))

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
