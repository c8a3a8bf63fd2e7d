"""A persistent, content-addressed store of embeddings: (model sha256, text) -> vector.

Re-evaluating an unchanged corpus is the common case in CI (most pull requests do
not touch the documents), so every vector is kept across runs in one SQLite file
inside a folder the Action hands to ``actions/cache``.

Why SQLite: its transactions make a crash mid-write roll back instead of leaving a
torn file, WAL mode lets parallel test workers or jobs read while one writes, and
the busy timeout makes concurrent writers queue rather than fail. Texts are keyed
by their sha256, so the file holds vectors, not a copy of the corpus; the model's
sha256 is part of the key, so a different model can never be served stale vectors.
"""

from __future__ import annotations

import hashlib
import sqlite3
import time
from collections.abc import Iterable, Mapping
from pathlib import Path

import numpy as np

CACHE_FILE = "embeddings.sqlite3"
# The folder inside a run's --cache-dir that holds the dense retriever's cache.
EMBEDDINGS_SUBDIR = "embeddings"
_BUSY_TIMEOUT_MS = 60_000
_SQLITE_MAX_VARIABLES = 900  # under SQLite's historical 999-parameter limit

_SCHEMA = """
CREATE TABLE IF NOT EXISTS embeddings (
    model_sha256 TEXT NOT NULL,
    text_sha256 BLOB NOT NULL,
    vector BLOB NOT NULL,
    PRIMARY KEY (model_sha256, text_sha256)
) WITHOUT ROWID
"""


def text_key(text: str) -> bytes:
    """The cache's key for a text (also what embedding shards are chosen by)."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()


class EmbeddingCache:
    """Open (creating if needed) the cache in ``directory``. Use as a context manager
    or call ``close()``: closing the last connection folds the WAL back into the
    main file, which is then the only file ``actions/cache`` needs to save."""

    def __init__(self, directory: Path, *, dimensions: int = 384) -> None:
        self.directory = Path(directory)
        self.path = self.directory / CACHE_FILE
        self.dimensions = dimensions
        self._vector_bytes = dimensions * 4
        # Said once by whoever opened the cache (the run's log): what was healed, if anything.
        self.warnings: list[str] = []
        self.directory.mkdir(parents=True, exist_ok=True)
        try:
            self._db = self._open()
        except sqlite3.DatabaseError as error:
            # Only a cache: a damaged file (a torn `actions/cache` restore, a replaced
            # file) is moved aside, kept for a post-mortem, and rebuilt from scratch.
            aside = self._move_aside()
            self.warnings.append(
                f"the embedding cache {self.path} was not a usable SQLite database ({error}); "
                f"moved it aside to {aside.name} and started a new one"
            )
            self._db = self._open()

    def _open(self) -> sqlite3.Connection:
        db = sqlite3.connect(self.path, timeout=_BUSY_TIMEOUT_MS / 1000)
        try:
            db.execute(f"PRAGMA busy_timeout = {_BUSY_TIMEOUT_MS}")
            db.execute("PRAGMA journal_mode = WAL")
            # NORMAL in WAL mode: a power cut may lose the last commit but never
            # corrupts the file — the right trade for a cache.
            db.execute("PRAGMA synchronous = NORMAL")
            with db:
                db.execute(_SCHEMA)
        except BaseException:
            db.close()
            raise
        return db

    def _move_aside(self) -> Path:
        aside = self.path.with_name(f"{CACHE_FILE}.corrupt-{time.strftime('%Y%m%dT%H%M%S')}")
        aside = next(
            candidate
            for n in range(1000)
            if not (
                candidate := aside.with_name(f"{aside.name}{'.' + str(n) if n else ''}")
            ).exists()
        )
        self.path.replace(aside)
        for suffix in ("-wal", "-shm"):  # SQLite's side files belong to the damaged file
            side = self.path.with_name(CACHE_FILE + suffix)
            if side.exists():
                side.replace(aside.with_name(aside.name + suffix))
        return aside

    def __enter__(self) -> EmbeddingCache:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        self._db.close()

    def get_many(self, model_sha256: str, texts: Iterable[str]) -> dict[str, np.ndarray]:
        """Vectors for the texts that are cached; absent texts are simply left out."""
        by_key = {text_key(text): text for text in texts}
        keys = list(by_key)
        found: dict[str, np.ndarray] = {}
        for start in range(0, len(keys), _SQLITE_MAX_VARIABLES):
            chunk = keys[start : start + _SQLITE_MAX_VARIABLES]
            placeholders = ",".join("?" * len(chunk))
            rows = self._db.execute(
                "SELECT text_sha256, vector FROM embeddings "
                f"WHERE model_sha256 = ? AND text_sha256 IN ({placeholders})",
                [model_sha256, *chunk],
            )
            for key, blob in rows:
                if len(blob) == self._vector_bytes:  # anything else is treated as a miss
                    found[by_key[key]] = np.frombuffer(blob, dtype="<f4").copy()
        return found

    def put_many(self, model_sha256: str, vectors: Mapping[str, np.ndarray]) -> None:
        """Store vectors in one transaction: all of them land, or none do."""
        rows = []
        for text, vector in vectors.items():
            data = np.ascontiguousarray(vector, dtype="<f4")
            if data.shape != (self.dimensions,):
                raise ValueError(f"expected a {self.dimensions}-vector, got shape {data.shape}")
            rows.append((model_sha256, text_key(text), data.tobytes()))
        with self._db:
            self._db.executemany(
                "INSERT OR REPLACE INTO embeddings VALUES (?, ?, ?)",
                rows,
            )

    def models(self) -> set[str]:
        """sha256 of every model with vectors in this cache."""
        rows = self._db.execute("SELECT DISTINCT model_sha256 FROM embeddings")
        return {str(model) for (model,) in rows}

    def merge_from(self, other: Path) -> int:
        """Copy in every vector of the cache file ``other`` not already here; return how many.

        Keys are content hashes, so a key present on both sides names the same text
        under the same model: keeping ours makes merging the same shard twice a no-op.
        """
        before = len(self)
        self._db.execute("ATTACH DATABASE ? AS other", (str(other),))
        try:
            with self._db:
                self._db.execute(
                    "INSERT OR IGNORE INTO embeddings SELECT model_sha256, text_sha256, vector "
                    "FROM other.embeddings"
                )
        finally:
            self._db.execute("DETACH DATABASE other")
        return len(self) - before

    def __len__(self) -> int:
        (count,) = self._db.execute("SELECT COUNT(*) FROM embeddings").fetchone()
        return int(count)
