"""Answers of a paid reranker, kept across runs in one SQLite file.

Keyed by a digest of everything that shapes the answer (the reranker builds it),
so a changed query, candidate, model or prompt is simply a miss. SQLite for the
same reasons as the embedding cache: a crash rolls back instead of tearing the
file, and concurrent jobs queue rather than fail.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from retrieval_eval.errors import InputError
from retrieval_eval.retrieval.rerank.base import Reranking

CACHE_FILE = "rerank.sqlite3"
_BUSY_TIMEOUT_S = 60.0
_SCHEMA = """
CREATE TABLE IF NOT EXISTS answers (
    key TEXT PRIMARY KEY,
    ranked TEXT NOT NULL,
    cost_usd REAL NOT NULL
) WITHOUT ROWID
"""


class RerankCache:
    def __init__(self, directory: Path) -> None:
        self.path = Path(directory) / CACHE_FILE
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self._db = sqlite3.connect(self.path, timeout=_BUSY_TIMEOUT_S)
            self._db.execute("PRAGMA journal_mode = WAL")
            with self._db:
                self._db.execute(_SCHEMA)
        except sqlite3.DatabaseError as error:
            raise InputError(
                f"the rerank cache is not a usable SQLite database ({error}); "
                "delete it (it is only a cache) and run again",
                file=self.path,
            ) from None

    def get(self, key: str) -> Reranking | None:
        row = self._db.execute(
            "SELECT ranked, cost_usd FROM answers WHERE key = ?", (key,)
        ).fetchone()
        if row is None:
            return None
        return Reranking(ranked=tuple(json.loads(row[0])), cost_usd=float(row[1]))

    def put(self, key: str, reranking: Reranking) -> None:
        with self._db:
            self._db.execute(
                "INSERT OR REPLACE INTO answers (key, ranked, cost_usd) VALUES (?, ?, ?)",
                (key, json.dumps(list(reranking.ranked)), reranking.cost_usd),
            )

    def close(self) -> None:
        self._db.close()
