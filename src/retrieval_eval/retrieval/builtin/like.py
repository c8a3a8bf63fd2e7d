"""The naive keyword baseline: SQLite ``LIKE '%word%'``, ranked by hit count.

Deliberately naive — substring matching, no term weighting, no stemming — so
it is the yardstick that shows what the other retrievers add (paraphrases and
synonyms it cannot match). A document's hit count is the number of distinct
query words (stop words removed) found in its title or body; more hits rank
higher, ties go to the smaller document id, and the hit text is the whole
document, so keyword groundedness is measured on the full text.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping, Sequence

from retrieval_eval.errors import RetrievalEvalError
from retrieval_eval.load.documents import Corpus
from retrieval_eval.retrieval.base import Hit, SearchResult
from retrieval_eval.retrieval.builtin.tokenizer import KeywordTokenizer
from retrieval_eval.retrieval.config import LikeConfig

_SCHEMA = """
CREATE TABLE notes (id TEXT PRIMARY KEY, title TEXT NOT NULL, body TEXT NOT NULL);
CREATE TABLE note_tags (note_id TEXT NOT NULL, tag TEXT NOT NULL, PRIMARY KEY (note_id, tag));
CREATE INDEX note_tags_by_tag ON note_tags (tag);
"""


class LikeRetriever:
    name = "like"

    def __init__(self, config: LikeConfig):
        self.config = config
        self.tokenizer = KeywordTokenizer(stopwords=True, stemming=False)
        self._db: sqlite3.Connection | None = None

    def index(self, corpus: Corpus) -> None:
        if self._db is not None:
            self._db.close()
        # check_same_thread off: the Action may index on one thread and query on another.
        db = sqlite3.connect(":memory:", check_same_thread=False)
        db.executescript(_SCHEMA)
        with db:
            db.executemany(
                "INSERT INTO notes (id, title, body) VALUES (?, ?, ?)",
                ((doc.id, doc.title, doc.text) for doc in corpus.documents),
            )
            db.executemany(
                "INSERT INTO note_tags (note_id, tag) VALUES (?, ?)",
                ((doc.id, tag) for doc in corpus.documents for tag in sorted(set(doc.tags))),
            )
        self._db = db

    def search(self, query: str, k: int, tags: Sequence[str] = ()) -> SearchResult:
        if self._db is None:
            raise RetrievalEvalError("like: search() called before index()")
        words = sorted(set(self.tokenizer.tokenize(query)))
        if not words or k <= 0:
            return SearchResult(hits=())
        hit_count = " + ".join(
            "((title LIKE ? ESCAPE '\\') OR (body LIKE ? ESCAPE '\\'))" for _ in words
        )
        params: list[object] = []
        for word in words:
            pattern = "%" + _escape_like(word) + "%"
            params += [pattern, pattern]
        where = ""
        if tags:
            # A tag filter that no note carries selects nothing: the empty-filter guard.
            placeholders = ", ".join("?" * len(tags))
            where = f"WHERE id IN (SELECT note_id FROM note_tags WHERE tag IN ({placeholders}))"
            params += list(tags)
        sql = (
            f"SELECT id, title, body, hits FROM (SELECT id, title, body, {hit_count} AS hits "
            f"FROM notes {where}) WHERE hits > 0 ORDER BY hits DESC, id ASC LIMIT ?"
        )
        rows = self._db.execute(sql, [*params, k]).fetchall()
        return SearchResult(
            hits=tuple(
                Hit(doc_id=doc_id, score=float(hits), text=_full_text(title, body))
                for doc_id, title, body, hits in rows
            )
        )

    def describe(self) -> Mapping[str, object]:
        return {
            "retriever": self.name,
            "match": "LIKE '%word%' on title and body",
            "tokenizer": self.tokenizer.describe(),
        }

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None


def _escape_like(word: str) -> str:
    return word.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def _full_text(title: str, body: str) -> str:
    return f"{title}\n{body}" if title and not body.startswith(title) else body
