"""A persistent, content-addressed store of embeddings: (recipe, text) -> vector.

Re-evaluating an unchanged corpus is the common case in CI (most pull requests do
not touch the documents), so every vector is kept across runs in one SQLite file
inside a folder the Action hands to ``actions/cache``.

Why SQLite: its transactions make a crash mid-write roll back instead of leaving a
torn file, WAL mode lets parallel test workers or jobs read while one writes, and
the busy timeout makes concurrent writers queue rather than fail. The file holds
vectors, not a copy of the corpus.

What a row can be trusted for. A row's key is the sha256 of the embedding recipe
(the model's sha256 and every setting that changes a vector, ``embedding_recipe.py``)
and of the text's sha256, and the row also stores that recipe and that text sha256:
a row is served only when both equal the request's and its vector is finite and of
the right size, so a row keyed for one text but recorded for another (a row copied
under a new key), for another model or recipe, or damaged, is a miss and is embedded
again. None of that can stop someone who writes the whole file to match, so a cache
file that git tracks (one that arrived with a pull request's tree) is never opened:
it is moved aside and a new cache is started.

Queries are cached too, with the seconds their embedding took when it was computed (a
query's share of its model call, the table ``query_seconds``, keyed like its vector's
row): a query served from the cache counts those seconds in its latency, so a query's
latency does not depend on whether the cache held it, and a warm run embeds nothing.
A ``query_seconds`` row is served only beside a vector row that passes the checks above,
and only when it is a finite, non-negative number of seconds below ``MAX_QUERY_SECONDS``.
"""

from __future__ import annotations

import hashlib
import math
import sqlite3
import time
import urllib.parse
from collections.abc import Collection, Iterable, Mapping
from pathlib import Path

import numpy as np

from retrieval_eval.index.embedding_recipe import DIMENSIONS, embedding_recipe
from retrieval_eval.index.tracked_files import tracked_by_git

CACHE_FILE = "embeddings.sqlite3"
# The folder inside a run's --cache-dir that holds the dense retriever's cache.
EMBEDDINGS_SUBDIR = "embeddings"
# SQLite's own files beside the database: each is read when the database is opened.
SIDE_SUFFIXES = ("-wal", "-shm", "-journal")
# Format 1 keyed rows by (model sha256, text sha256) alone and left PRAGMA user_version at
# 0; format 2 is described above. A file in another format is emptied and refilled.
CACHE_FORMAT = 2
_BUSY_TIMEOUT_MS = 60_000
_SQLITE_MAX_VARIABLES = 900  # under SQLite's historical 999-parameter limit
_MERGE_BATCH = 1000

# A stored query embedding time above this is not a measurement but a damaged row.
MAX_QUERY_SECONDS = 3600.0

_SCHEMA = """
CREATE TABLE IF NOT EXISTS vectors (
    key BLOB NOT NULL PRIMARY KEY,
    model_sha256 TEXT NOT NULL,
    recipe TEXT NOT NULL,
    text_sha256 BLOB NOT NULL,
    vector BLOB NOT NULL
) WITHOUT ROWID
"""
# Added within format 2: a release that does not know it leaves it alone, and a cache
# written before it gains it empty when opened.
_SECONDS_SCHEMA = """
CREATE TABLE IF NOT EXISTS query_seconds (
    key BLOB NOT NULL PRIMARY KEY,
    seconds REAL NOT NULL
) WITHOUT ROWID
"""


def text_key(text: str) -> bytes:
    """The sha256 of a text: what embedding shards are chosen by, and part of its cache key."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()


def row_key(recipe: str, text_sha256: bytes) -> bytes:
    """The key of the row holding the vector of the text with ``text_sha256`` under ``recipe``."""
    return hashlib.sha256(recipe.encode("utf-8") + b"\0" + text_sha256).digest()


def cache_files(path: Path) -> list[Path]:
    """The database file and the side files SQLite would read with it."""
    return [path, *(path.with_name(path.name + suffix) for suffix in SIDE_SUFFIXES)]


def committed_cache_files(path: Path) -> tuple[list[Path], str | None]:
    """Those of the cache's files that git tracks, and why git's index could not be read
    (then every existing file counts as tracked: a cache nobody can vouch for is not used)."""
    files = cache_files(path.absolute())
    tracked = tracked_by_git(files)
    if tracked.unreadable is not None:
        return [file for file in files if file.exists() or file.is_symlink()], tracked.unreadable
    return sorted(tracked.paths), None


def usable_vectors(blobs: list[bytes]) -> np.ndarray:
    """For each blob: is it a finite vector of the model's size (float32, little-endian)?"""
    ok = np.array([len(blob) == DIMENSIONS * 4 for blob in blobs], dtype=bool)
    if ok.any():
        matrix = np.frombuffer(
            b"".join(blob for blob, good in zip(blobs, ok, strict=True) if good), dtype="<f4"
        ).reshape(-1, DIMENSIONS)
        ok[ok] = np.isfinite(matrix).all(axis=1)
    return ok


def usable_seconds(value: object) -> bool:
    """Is a stored query embedding time a plausible measurement?"""
    return isinstance(value, float) and math.isfinite(value) and 0.0 <= value < MAX_QUERY_SECONDS


def has_table(db: sqlite3.Connection, name: str) -> bool:
    rows = db.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (name,))
    return rows.fetchone() is not None


def open_read_only(path: Path) -> sqlite3.Connection:
    """A cache file as it is on disk: read only, and never through side files beside it (a
    closed cache keeps everything in its main file; a stray ``-wal`` is not replayed)."""
    uri = f"file:{urllib.parse.quote(str(path.absolute()))}?mode=ro&immutable=1"
    return sqlite3.connect(uri, uri=True)


def file_format(db: sqlite3.Connection) -> int:
    ((version,),) = db.execute("PRAGMA user_version").fetchall()
    return int(version)


class EmbeddingCache:
    """Open (creating if needed) the cache in ``directory``. Use as a context manager
    or call ``close()``: closing the last connection folds the WAL back into the
    main file, which is then the only file ``actions/cache`` needs to save."""

    def __init__(self, directory: Path) -> None:
        self.directory = Path(directory)
        self.path = self.directory / CACHE_FILE
        self._healed: list[str] = []
        self._refused = 0
        self.directory.mkdir(parents=True, exist_ok=True)
        self._set_aside_committed()
        try:
            self._db = self._open()
        except sqlite3.DatabaseError as error:
            # Only a cache: a damaged file (a torn `actions/cache` restore, a replaced
            # file) is moved aside, kept for a post-mortem, and rebuilt from scratch.
            aside = self._move_aside(f"corrupt-{time.strftime('%Y%m%dT%H%M%S')}")
            self._healed.append(
                f"the embedding cache {self.path} was not a usable SQLite database ({error}); "
                f"moved it aside to {aside.name} and started a new one"
            )
            self._db = self._open()

    def _set_aside_committed(self) -> None:
        committed, unreadable = committed_cache_files(self.path)
        if not committed:
            return
        aside = self._move_aside("committed", unique=False)
        names = ", ".join(path.name for path in committed)
        why = (
            f"git's index could not be read ({unreadable}), so {names} may be committed"
            if unreadable is not None
            else f"git tracks {names}"
        )
        self._healed.append(
            f"the embedding cache {self.path} is not used: {why}, and vectors that arrive "
            "with the repository's files (a pull request's, say) could be anything; moved "
            f"it aside to {aside.name} and started a new one. Keep the cache out of git "
            f"(`git rm --cached` it and list its folder in .gitignore)"
        )

    def _open(self) -> sqlite3.Connection:
        db = sqlite3.connect(self.path, timeout=_BUSY_TIMEOUT_MS / 1000)
        try:
            db.execute(f"PRAGMA busy_timeout = {_BUSY_TIMEOUT_MS}")
            db.execute("PRAGMA journal_mode = WAL")
            # NORMAL in WAL mode: a power cut may lose the last commit but never
            # corrupts the file — the right trade for a cache.
            db.execute("PRAGMA synchronous = NORMAL")
            self._use_current_format(db)
        except BaseException:
            db.close()
            raise
        return db

    def _use_current_format(self, db: sqlite3.Connection) -> None:
        """Empty a cache in another format and set up this one, in one transaction, so
        two processes opening an old cache at once neither clash nor empty it twice."""
        db.execute("BEGIN IMMEDIATE")
        try:
            version = file_format(db)
            if version != CACHE_FORMAT:
                tables = [
                    str(name)
                    for (name,) in db.execute(
                        "SELECT name FROM sqlite_master WHERE type = 'table' "
                        "AND name NOT LIKE 'sqlite_%'"
                    )
                ]
                for table in tables:
                    db.execute(f'DROP TABLE "{table.replace(chr(34), chr(34) * 2)}"')
                if tables:
                    self._healed.append(
                        f"the embedding cache {self.path} is in cache format {version or 1}, "
                        f"this version of retrieval-eval reads format {CACHE_FORMAT}; emptied "
                        "it: its texts are embedded again, once"
                    )
                db.execute(f"PRAGMA user_version = {CACHE_FORMAT}")
            db.execute(_SCHEMA)
            db.execute(_SECONDS_SCHEMA)
            db.commit()
        except BaseException:
            db.rollback()
            raise

    def _move_aside(self, label: str, *, unique: bool = True) -> Path:
        aside = self.path.with_name(f"{CACHE_FILE}.{label}")
        if unique:
            aside = next(
                candidate
                for n in range(1000)
                if not (
                    candidate := aside.with_name(f"{aside.name}{'.' + str(n) if n else ''}")
                ).exists()
            )
        for source, target in zip(cache_files(self.path), cache_files(aside), strict=True):
            # SQLite's side files belong to the file moved aside; a stale one left behind
            # would be replayed into the new database.
            if source.exists() or source.is_symlink():
                source.replace(target)
        return aside

    @property
    def warnings(self) -> list[str]:
        """For whoever opened the cache to say once (the run's log): what was healed on
        opening, and how many rows reading refused."""
        refused = (
            [
                f"{self._refused} row(s) of the embedding cache {self.path} did not hold the "
                "vector of the text, model and recipe their key names; embedded those texts "
                "again"
            ]
            if self._refused
            else []
        )
        return [*self._healed, *refused]

    def __enter__(self) -> EmbeddingCache:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        self._db.close()

    def get_many(
        self, model_sha256: str, texts: Iterable[str], *, recipe: str | None = None
    ) -> dict[str, np.ndarray]:
        """Vectors for the texts that are cached; absent texts are simply left out, and so
        are rows that are not what their key says (counted in ``warnings``). ``recipe``
        defaults to the default model's (``embedding_recipe(model_sha256)``)."""
        recipe = recipe if recipe is not None else embedding_recipe(model_sha256)
        return {
            text: vector for text, (vector, _) in self._read(recipe, texts, timed=False).items()
        }

    def get_timed(
        self, model_sha256: str, texts: Iterable[str], *, recipe: str
    ) -> dict[str, tuple[np.ndarray, float]]:
        """Queries' vectors with the seconds their embedding took, for the texts whose vector
        and seconds are both cached and usable (a vector cached without seconds, as a passage
        or by an earlier release, is left out: it is embedded again to be timed)."""
        return {
            text: (vector, seconds)
            for text, (vector, seconds) in self._read(recipe, texts, timed=True).items()
            if seconds is not None
        }

    def _read(
        self, recipe: str, texts: Iterable[str], *, timed: bool
    ) -> dict[str, tuple[np.ndarray, float | None]]:
        wanted: dict[bytes, tuple[str, bytes]] = {}
        for text in texts:
            digest = text_key(text)
            wanted[row_key(recipe, digest)] = (text, digest)
        keys = list(wanted)
        rows: list[tuple[str, bytes, object]] = []
        refused = 0
        seconds_column = "s.seconds" if timed else "NULL"
        seconds_join = "LEFT JOIN query_seconds AS s ON s.key = v.key " if timed else ""
        for start in range(0, len(keys), _SQLITE_MAX_VARIABLES):
            chunk = keys[start : start + _SQLITE_MAX_VARIABLES]
            placeholders = ",".join("?" * len(chunk))
            for key, stored_recipe, stored_digest, blob, seconds in self._db.execute(
                f"SELECT v.key, v.recipe, v.text_sha256, v.vector, {seconds_column} "
                f"FROM vectors AS v {seconds_join}WHERE v.key IN ({placeholders})",
                chunk,
            ):
                text, digest = wanted[key]
                if stored_recipe == recipe and stored_digest == digest:
                    rows.append((text, blob, seconds))
                else:
                    refused += 1
        good = usable_vectors([blob for _, blob, _ in rows])
        self._refused += refused + int((~good).sum())
        return {
            text: (
                np.frombuffer(blob, dtype="<f4").copy(),
                float(seconds) if usable_seconds(seconds) else None,  # type: ignore[arg-type]
            )
            for (text, blob, seconds), ok in zip(rows, good, strict=True)
            if ok
        }

    def cached(self, model_sha256: str, texts: Iterable[str], *, recipe: str) -> set[str]:
        """Those of ``texts`` with a row under ``recipe`` (not checked: for an estimate of
        the work ahead, not for serving a vector)."""
        keyed = {row_key(recipe, text_key(text)): text for text in texts}
        keys = list(keyed)
        found: set[str] = set()
        for start in range(0, len(keys), _SQLITE_MAX_VARIABLES):
            chunk = keys[start : start + _SQLITE_MAX_VARIABLES]
            placeholders = ",".join("?" * len(chunk))
            rows = self._db.execute(f"SELECT key FROM vectors WHERE key IN ({placeholders})", chunk)
            found.update(keyed[key] for (key,) in rows)
        return found

    def put_many(
        self,
        model_sha256: str,
        vectors: Mapping[str, np.ndarray],
        *,
        recipe: str | None = None,
        seconds: Mapping[str, float] | None = None,
    ) -> None:
        """Store vectors in one transaction: all of them land, or none do. ``seconds``:
        each query's embedding time, stored beside its vector (when it is plausible)."""
        recipe = recipe if recipe is not None else embedding_recipe(model_sha256)
        rows = []
        timings = []
        for text, vector in vectors.items():
            data = np.ascontiguousarray(vector, dtype="<f4")
            if data.shape != (DIMENSIONS,):
                raise ValueError(f"expected a {DIMENSIONS}-vector, got shape {data.shape}")
            digest = text_key(text)
            key = row_key(recipe, digest)
            rows.append((key, model_sha256, recipe, digest, data.tobytes()))
            if seconds is not None and usable_seconds(spent := float(seconds[text])):
                timings.append((key, spent))
        with self._db:
            self._db.executemany("INSERT OR REPLACE INTO vectors VALUES (?, ?, ?, ?, ?)", rows)
            self._db.executemany("INSERT OR REPLACE INTO query_seconds VALUES (?, ?)", timings)

    def models(self) -> set[str]:
        """sha256 of every model with vectors in this cache."""
        rows = self._db.execute("SELECT DISTINCT model_sha256 FROM vectors")
        return {str(model) for (model,) in rows}

    def merge_from(
        self, other: sqlite3.Connection, model_sha256: str, recipes: Collection[str]
    ) -> tuple[int, int]:
        """Copy in the rows of the format-2 cache ``other`` (see ``open_read_only``) that
        pass the checks ``get_many`` makes and are not already here; return (added,
        refused). ``recipes`` are the model's (its passage and query recipes). Keys are
        content hashes, so a key present on both sides names the same text under the same
        recipe: keeping ours makes merging the same shard twice a no-op.
        """
        accepted = frozenset(recipes)
        before = len(self)
        refused = 0
        rows = other.execute("SELECT key, model_sha256, recipe, text_sha256, vector FROM vectors")
        with self._db:  # one transaction: a refused or failed merge adds nothing
            while batch := rows.fetchmany(_MERGE_BATCH):
                keyed = [
                    row
                    for row in batch
                    if row[1] == model_sha256
                    and row[2] in accepted
                    and isinstance(row[3], bytes)
                    and len(row[3]) == 32
                    and row[0] == row_key(row[2], row[3])
                    and isinstance(row[4], bytes)
                ]
                good = usable_vectors([row[4] for row in keyed])
                passed = [row for row, ok in zip(keyed, good, strict=True) if ok]
                refused += len(batch) - len(passed)
                self._db.executemany("INSERT OR IGNORE INTO vectors VALUES (?, ?, ?, ?, ?)", passed)
            if has_table(other, "query_seconds"):
                self._merge_seconds(other)
        return len(self) - before, refused

    def _merge_seconds(self, other: sqlite3.Connection) -> None:
        """The queries' embedding times of ``other`` whose vector rows are here (merged or
        already present) and that are plausible; ours win where both have one."""
        rows = other.execute("SELECT key, seconds FROM query_seconds")
        while batch := rows.fetchmany(_MERGE_BATCH):
            plausible = [
                (key, seconds)
                for key, seconds in batch
                if isinstance(key, bytes) and usable_seconds(seconds)
            ]
            self._db.executemany(
                "INSERT OR IGNORE INTO query_seconds SELECT ?, ? "
                "WHERE EXISTS (SELECT 1 FROM vectors WHERE key = ?)",
                [(key, seconds, key) for key, seconds in plausible],
            )

    def __len__(self) -> int:
        (count,) = self._db.execute("SELECT COUNT(*) FROM vectors").fetchone()
        return int(count)
