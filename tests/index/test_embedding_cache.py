"""EmbeddingCache on real SQLite files, with real concurrent and killed writer processes."""

from __future__ import annotations

import math
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from retrieval_eval.index.embedding_cache import (
    CACHE_FILE,
    MAX_QUERY_SECONDS,
    EmbeddingCache,
    row_key,
    text_key,
)
from retrieval_eval.index.embedding_recipe import embedding_recipe

MODEL = "a" * 64
OTHER_MODEL = "b" * 64


def _vector(seed: int) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(384).astype(np.float32)


def test_round_trip_is_exact_and_misses_are_left_out(tmp_path: Path) -> None:
    with EmbeddingCache(tmp_path) as cache:
        cache.put_many(MODEL, {"alpha": _vector(1), "βeta 東京": _vector(2)})
        found = cache.get_many(MODEL, ["alpha", "βeta 東京", "gamma"])
    assert sorted(found) == ["alpha", "βeta 東京"]
    assert np.array_equal(found["alpha"], _vector(1))
    assert np.array_equal(found["βeta 東京"], _vector(2))


def test_vectors_are_keyed_by_model_too(tmp_path: Path) -> None:
    with EmbeddingCache(tmp_path) as cache:
        cache.put_many(MODEL, {"alpha": _vector(1)})
        assert cache.get_many(OTHER_MODEL, ["alpha"]) == {}


def test_cache_persists_across_processes_in_one_file(tmp_path: Path) -> None:
    with EmbeddingCache(tmp_path) as cache:
        cache.put_many(MODEL, {f"text {i}": _vector(i) for i in range(2000)})
    # Closing folds the WAL back: the one file is all actions/cache has to save.
    assert sorted(p.name for p in tmp_path.iterdir()) == [CACHE_FILE]
    with EmbeddingCache(tmp_path) as reopened:
        found = reopened.get_many(MODEL, [f"text {i}" for i in range(2000)])  # > one SQL batch
    assert len(found) == 2000
    assert np.array_equal(found["text 1999"], _vector(1999))


def test_wrong_sized_vectors_are_rejected_and_treated_as_misses(tmp_path: Path) -> None:
    with (
        EmbeddingCache(tmp_path) as cache,
        pytest.raises(ValueError, match=r"expected a 384-vector, got shape \(3,\)"),
    ):
        cache.put_many(MODEL, {"short": np.zeros(3, dtype=np.float32)})
    recipe, digest = embedding_recipe(MODEL), text_key("short")
    with sqlite3.connect(tmp_path / CACHE_FILE) as db:  # a stale row from some other writer
        db.execute(
            "INSERT INTO vectors VALUES (?, ?, ?, ?, ?)",
            (row_key(recipe, digest), MODEL, recipe, digest, b"\0" * 12),
        )
    with EmbeddingCache(tmp_path) as cache:
        assert len(cache) == 1
        assert cache.get_many(MODEL, ["short"]) == {}


def test_a_file_that_is_not_a_database_is_moved_aside_and_rebuilt(tmp_path: Path) -> None:
    damaged = b"this is not sqlite, it is a truncated download" * 100
    (tmp_path / CACHE_FILE).write_bytes(damaged)
    with EmbeddingCache(tmp_path) as cache:
        [aside] = [p for p in tmp_path.iterdir() if ".corrupt-" in p.name]
        assert aside.read_bytes() == damaged
        assert cache.warnings == [
            f"the embedding cache {tmp_path / CACHE_FILE} was not a usable SQLite database "
            f"(file is not a database); moved it aside to {aside.name} and started a new one"
        ]
        cache.put_many(MODEL, {"text": np.ones(384, dtype=np.float32)})
        assert len(cache) == 1


_WRITER = """
import sys
from pathlib import Path
import numpy as np
from retrieval_eval.index.embedding_cache import EmbeddingCache

directory, worker, batches = Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
with EmbeddingCache(directory) as cache:
    batch = 0
    while batches < 0 or batch < batches:
        cache.put_many("m" * 64, {
            f"{worker}/{batch}/{i}": np.full(384, worker * 1000 + batch, np.float32)
            for i in range(100)
        })
        batch += 1
        print(batch, flush=True)
"""


def _start_writer(directory: Path, worker: int, batches: int) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", _WRITER, str(directory), str(worker), str(batches)],
        stdout=subprocess.PIPE,
        text=True,
    )


def test_concurrent_writer_processes_all_land(tmp_path: Path) -> None:
    writers = [_start_writer(tmp_path, worker, batches=10) for worker in range(4)]
    for writer in writers:
        writer.communicate()
        assert writer.returncode == 0
    with EmbeddingCache(tmp_path) as cache:
        assert len(cache) == 4 * 10 * 100
        found = cache.get_many("m" * 64, ["3/9/99", "0/0/0"])
    assert found["3/9/99"][0] == 3009.0
    assert found["0/0/0"][0] == 0.0


def test_a_writer_killed_mid_write_never_leaves_a_torn_batch(tmp_path: Path) -> None:
    writer = _start_writer(tmp_path, worker=7, batches=-1)  # writes until killed
    assert writer.stdout is not None
    for _ in range(5):  # wait for five committed batches, then kill it mid-stream
        writer.stdout.readline()
    writer.kill()
    writer.wait()
    writer.stdout.close()
    with sqlite3.connect(tmp_path / CACHE_FILE) as db:
        assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    with EmbeddingCache(tmp_path) as cache:
        rows = len(cache)
    assert rows >= 500
    assert rows % 100 == 0  # whole batches only: a transaction lands entirely or not at all


def test_a_side_file_git_tracks_sets_the_whole_cache_aside(tmp_path: Path) -> None:
    """SQLite replays a `-wal` beside the database when it opens it: a committed one would
    write its pages into whatever cache sits there (restored by `actions/cache`, say)."""
    from tests.action.git_repo import commit_all, git, init_repo

    init_repo(tmp_path)
    (tmp_path / ".gitignore").write_text(".retrieval-eval-cache/\n", encoding="utf-8")
    folder = tmp_path / ".retrieval-eval-cache" / "embeddings"
    with EmbeddingCache(folder) as cache:
        cache.put_many(MODEL, {"alpha": _vector(1)})
    wal = folder / f"{CACHE_FILE}-wal"
    wal.write_bytes(b"pages a pull request chose")
    git(tmp_path, "add", "-f", str(wal))
    commit_all(tmp_path, "a committed write-ahead log")

    with EmbeddingCache(folder) as cache:
        assert cache.warnings == [
            f"the embedding cache {folder / CACHE_FILE} is not used: git tracks "
            f"{CACHE_FILE}-wal, and vectors that arrive with the repository's files (a pull "
            f"request's, say) could be anything; moved it aside to {CACHE_FILE}.committed and "
            "started a new one. Keep the cache out of git (`git rm --cached` it and list its "
            "folder in .gitignore)"
        ]
        assert cache.get_many(MODEL, ["alpha"]) == {}
    assert (folder / f"{CACHE_FILE}.committed-wal").read_bytes() == b"pages a pull request chose"
    assert (folder / f"{CACHE_FILE}.committed").is_file()  # the database it sat beside, too


QUERY_RECIPE = embedding_recipe(MODEL, role="query")


def test_a_query_comes_back_with_the_seconds_its_embedding_took(tmp_path: Path) -> None:
    with EmbeddingCache(tmp_path) as cache:
        cache.put_many(MODEL, {"passage": _vector(1)}, recipe=QUERY_RECIPE)
        cache.put_many(MODEL, {"query": _vector(2)}, recipe=QUERY_RECIPE, seconds={"query": 0.25})
        timed = cache.get_timed(MODEL, ["passage", "query", "absent"], recipe=QUERY_RECIPE)
    # A vector stored without seconds (as a passage) is no timed hit: it is embedded again.
    assert list(timed) == ["query"]
    vector, seconds = timed["query"]
    assert np.array_equal(vector, _vector(2)) and seconds == 0.25


@pytest.mark.parametrize("stored", [-1.0, float("nan"), float("inf"), 7200.0])
def test_implausible_seconds_are_no_timed_hit(tmp_path: Path, stored: float) -> None:
    with EmbeddingCache(tmp_path) as cache:
        cache.put_many(MODEL, {"query": _vector(2)}, recipe=QUERY_RECIPE, seconds={"query": stored})
        assert cache.get_timed(MODEL, ["query"], recipe=QUERY_RECIPE) == {}
        assert list(cache.get_many(MODEL, ["query"], recipe=QUERY_RECIPE)) == ["query"]


def test_seconds_beside_a_refused_vector_are_not_served(tmp_path: Path) -> None:
    """The seconds of a row whose vector fails the checks go with it."""
    with EmbeddingCache(tmp_path) as cache:
        cache.put_many(MODEL, {"query": _vector(2)}, recipe=QUERY_RECIPE, seconds={"query": 0.1})
    with sqlite3.connect(tmp_path / CACHE_FILE) as db:
        db.execute("UPDATE vectors SET vector = ?", (b"\x00" * 12,))
    db.close()
    with EmbeddingCache(tmp_path) as cache:
        assert cache.get_timed(MODEL, ["query"], recipe=QUERY_RECIPE) == {}
        assert any("did not hold the vector" in warning for warning in cache.warnings)


def test_a_cache_written_before_query_seconds_existed_gains_the_table(tmp_path: Path) -> None:
    with EmbeddingCache(tmp_path) as cache:
        cache.put_many(MODEL, {"alpha": _vector(1)})
    with sqlite3.connect(tmp_path / CACHE_FILE) as db:
        db.execute("DROP TABLE query_seconds")
    db.close()
    with EmbeddingCache(tmp_path) as cache:
        assert list(cache.get_many(MODEL, ["alpha"])) == ["alpha"]  # not emptied
        cache.put_many(MODEL, {"q": _vector(3)}, recipe=QUERY_RECIPE, seconds={"q": 0.5})
        assert cache.get_timed(MODEL, ["q"], recipe=QUERY_RECIPE)["q"][1] == 0.5


def test_merging_carries_the_queries_seconds_with_their_vectors(tmp_path: Path) -> None:
    from retrieval_eval.index.embedding_cache import open_read_only

    with EmbeddingCache(tmp_path / "shard") as shard:
        shard.put_many(MODEL, {"q": _vector(3)}, recipe=QUERY_RECIPE, seconds={"q": 0.5})
        shard.put_many(MODEL, {"p": _vector(4)})
    recipes = {embedding_recipe(MODEL), QUERY_RECIPE}
    with EmbeddingCache(tmp_path / "all") as merged:
        source = open_read_only(tmp_path / "shard" / CACHE_FILE)
        try:
            assert merged.merge_from(source, MODEL, recipes) == (2, 0)
        finally:
            source.close()
        assert merged.get_timed(MODEL, ["q"], recipe=QUERY_RECIPE)["q"][1] == 0.5
        assert list(merged.get_many(MODEL, ["p"])) == ["p"]


@settings(max_examples=60, deadline=None)
@given(stored=st.floats(allow_nan=True, allow_infinity=True, width=64))
def test_a_stored_query_time_is_served_exactly_when_it_is_plausible(stored: float) -> None:
    """Whatever number a row holds, it is served as it was stored or not at all."""
    with tempfile.TemporaryDirectory() as folder, EmbeddingCache(Path(folder)) as cache:
        cache.put_many(MODEL, {"q": _vector(5)}, recipe=QUERY_RECIPE, seconds={"q": stored})
        if not math.isnan(stored):  # SQLite stores NaN as NULL, which the column refuses
            with cache._db:  # as a forged file would hold it, past put_many's own check
                cache._db.execute(
                    "INSERT OR REPLACE INTO query_seconds VALUES (?, ?)",
                    (row_key(QUERY_RECIPE, text_key("q")), stored),
                )
        timed = cache.get_timed(MODEL, ["q"], recipe=QUERY_RECIPE)
    plausible = math.isfinite(stored) and 0.0 <= stored < MAX_QUERY_SECONDS
    assert (timed["q"][1] if timed else None) == (stored if plausible else None)
