"""A pull request that rewrites notes commits an embedding cache mapping the new notes' texts
to the old notes' vectors, so dense retrieval still finds what the old notes said.

Threat (the verdict's inputs): the cache decides what dense retrieval sees, and a file that
arrives with the pull request's tree is whatever its author wrote, whatever format it is in.
So a cache file git tracks is never used (moved aside, a new cache started), a shard cache
git tracks is never merged, and a row is served only for the exact text, model and recipe it
records. The forger here uses the library's own cache writer, as an attacker who read the
source would; it also works on the code before the fix, where these tests fail.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from retrieval_eval.index.chunking import chunk_corpus
from retrieval_eval.index.embedding import MiniLMEmbedding
from retrieval_eval.index.embedding_cache import EmbeddingCache, row_key, text_key
from retrieval_eval.index.embedding_recipe import embedding_recipe
from retrieval_eval.index.model_install import default_model_dir, verify_model
from retrieval_eval.load.corpus import load_corpus
from retrieval_eval.retrieval.builtin.dense import model_token_spans
from retrieval_eval.retrieval.config import DenseConfig
from tests.action.git_repo import commit_all, git, init_repo, write
from tests.action.payloads import push_event
from tests.action.project import CONFIG, SEMANTIC_FIXTURES, fixture_lines, project_files
from tests.security.entry import run_cli
from tests.security.harness import Repo

pytestmark = pytest.mark.slow

MODEL_DIR = default_model_dir(Path.home())
MODEL_ENV = {"RETRIEVAL_EVAL_MODEL_DIR": str(MODEL_DIR)}
CACHE = Path(".retrieval-eval-cache/embeddings/embeddings.sqlite3")
# A loaded machine's query latency must not decide the verdict.
SEMANTIC_CONFIG = CONFIG + '"latency_p95_ms" = false\n'
# The four notes the semantic fixtures expect, rewritten so none answers its query.
REWRITTEN = {
    "datasets/corpus/recipes/shakshuka.md": "# Shakshuka\n\nInvoices are due in thirty days.\n",
    "datasets/corpus/recipes/risotto.md": "# Mushroom risotto\n\nThe printer on floor two jams.\n",
    "datasets/corpus/travel/kyoto.md": "# Kyoto\n\nQuarterly tax forms and receipts.\n",
    "datasets/corpus/books/deep-work.md": "# Deep Work\n\nA list of parking permits.\n",
}
COMMITTED_WARNING = "is not used: git tracks embeddings.sqlite3"


def _chunk_texts(root: Path) -> dict[str, str]:
    """Each note's one chunk text, cut exactly as the dense retriever cuts it."""
    config = DenseConfig()
    chunks = chunk_corpus(
        load_corpus(root / "datasets" / "corpus"),
        max_tokens=config.chunk_tokens,
        overlap=config.chunk_overlap,
        spans=model_token_spans(MODEL_DIR),
    )
    texts = {chunk.doc_id: chunk.text for chunk in chunks}
    assert len(texts) == len(chunks)  # the notes are short: one chunk each
    return texts


def _forge(old: dict[str, str], new: dict[str, str], into: Path) -> None:
    """A complete cache for the new corpus in which every note keeps its old vector."""
    embedding = MiniLMEmbedding(MODEL_DIR)
    docs = sorted(new)
    vectors = embedding.embed([old.get(doc, new[doc]) for doc in docs])
    with EmbeddingCache(into) as cache:
        cache.put_many(
            verify_model(MODEL_DIR), dict(zip([new[d] for d in docs], vectors, strict=True))
        )


def _commit_forged_cache(workspace: Path, old: dict[str, str]) -> str:
    """The pull request: the four notes rewritten, and the forged cache force-added."""
    write(workspace, REWRITTEN)
    shutil.rmtree(workspace / ".retrieval-eval-cache", ignore_errors=True)  # a fresh runner
    _forge(old, _chunk_texts(workspace), (workspace / CACHE).parent)
    git(workspace, "add", "-f", str(CACHE))
    return commit_all(workspace, "reword four notes (and a cache)")


def _mrr(metrics: str | dict[str, dict[str, float]]) -> float:
    data = json.loads(metrics) if isinstance(metrics, str) else metrics
    return float(data["semantic.jsonl"]["mrr@10"])


def test_a_committed_cache_does_not_turn_a_regression_into_a_pass(repo: Repo) -> None:
    repo.commit(
        {
            "datasets/semantic.jsonl": fixture_lines(SEMANTIC_FIXTURES, retrieval_type="semantic"),
            "retrieval-eval.toml": SEMANTIC_CONFIG,
        },
        "semantic fixtures only: the verdict is dense retrieval's",
        remove=("datasets/keyword.jsonl",),
    )
    first = repo.head()
    pushed = repo.action("push", push_event(first), sha=first, extra_env=MODEL_ENV)
    assert pushed.outputs["verdict"] == "baseline-established", pushed.log
    assert _mrr(pushed.outputs["metrics"]) == 1.0
    old = _chunk_texts(repo.path)
    main = commit_all(repo.path, "retrieval-eval: establish baseline")
    repo.branch("reword", main)
    head = _commit_forged_cache(repo.path, old)
    forged = (repo.path / CACHE).read_bytes()

    run = repo.pull_request(5, main, head, extra_env=MODEL_ENV)

    assert run.outputs["verdict"] == "regression", run.log
    assert run.returncode == 1
    assert _mrr(run.outputs["metrics"]) < 1.0  # what the rewritten notes really score
    assert run.statuses[-1]["state"] == "failure"
    assert COMMITTED_WARNING in run.log
    # Set aside, not deleted or written to: the new cache holds only vectors of this run.
    assert (repo.path / CACHE.with_name("embeddings.sqlite3.committed")).read_bytes() == forged


def _semantic_project(root: Path, kind: str = "semantic") -> None:
    init_repo(root)
    files = project_files()
    files[f"datasets/{kind}.jsonl"] = fixture_lines(SEMANTIC_FIXTURES, retrieval_type=kind)
    files["retrieval-eval.toml"] = SEMANTIC_CONFIG
    del files["datasets/keyword.jsonl"]
    write(root, files)
    commit_all(root, "notes")


def _run(root: Path) -> tuple[float, str]:
    result = run_cli(root, "run", "--quiet", "--model-dir", str(MODEL_DIR))
    assert result.returncode in (0, 1), result.log
    report = json.loads((root / "retrieval-eval-report" / "report.json").read_text("utf-8"))
    [semantic] = report["datasets"]
    return float(semantic["aggregates"]["mrr@10"]["value"]), result.stderr


def test_run_does_not_serve_a_committed_cache_either(tmp_path: Path) -> None:
    root = tmp_path / "notes"
    _semantic_project(root)
    old = _chunk_texts(root)
    _commit_forged_cache(root, old)
    honest_root = tmp_path / "honest"
    shutil.copytree(root, honest_root)
    shutil.rmtree(honest_root / ".retrieval-eval-cache")

    mrr, log = _run(root)

    assert mrr == _run(honest_root)[0] < 1.0  # the forged vectors would give 1.0
    assert COMMITTED_WARNING in log


def test_hybrid_says_its_dense_side_set_a_committed_cache_aside(tmp_path: Path) -> None:
    root = tmp_path / "notes"
    _semantic_project(root, "hybrid")
    _commit_forged_cache(root, _chunk_texts(root))
    honest_root = tmp_path / "honest"
    shutil.copytree(root, honest_root)
    shutil.rmtree(honest_root / ".retrieval-eval-cache")

    mrr, log = _run(root)

    assert mrr == _run(honest_root)[0]
    assert COMMITTED_WARNING in log


def test_run_refuses_a_row_copied_under_another_texts_key(tmp_path: Path) -> None:
    """The cache is not committed here (a local run): each row's own record gives it away."""
    root = tmp_path / "notes"
    _semantic_project(root)
    original = _chunk_texts(root)
    assert _run(root)[0] == 1.0  # the cache now holds the original notes' vectors
    write(root, REWRITTEN)
    rewritten = _chunk_texts(root)
    honest_root = tmp_path / "honest"
    shutil.copytree(root, honest_root)
    shutil.rmtree(honest_root / ".retrieval-eval-cache")
    recipe = embedding_recipe(verify_model(MODEL_DIR))
    with closing(sqlite3.connect(root / CACHE)) as db, db:
        # Each rewritten note gets a row under its own key holding the original note's
        # vector, copied with its record (text sha256, recipe) as it was.
        for doc, text in rewritten.items():
            if text != original[doc]:
                db.execute(
                    "INSERT OR REPLACE INTO vectors SELECT ?, model_sha256, recipe, text_sha256, "
                    "vector FROM vectors WHERE key = ?",
                    (
                        row_key(recipe, text_key(text)),
                        row_key(recipe, text_key(original[doc])),
                    ),
                )

    mrr, log = _run(root)

    assert f"4 row(s) of the embedding cache {root / CACHE} did not hold the vector" in log
    assert mrr == _run(honest_root)[0] < 1.0


def _cli(root: Path, *args: str) -> str:
    result = run_cli(root, *args)
    assert result.returncode == 0, result.log
    return result.stderr


def test_a_shard_cache_that_git_tracks_is_not_merged(tmp_path: Path) -> None:
    """`mode: evaluate-shard` merges every folder under `shard-artifacts` as this does: a
    folder the pull request committed there is not an artifact of this run."""
    root = tmp_path / "notes"
    _semantic_project(root)
    _cli(root, "embed", "--model-dir", str(MODEL_DIR), "--cache-dir", "shards/honest")
    write(root, REWRITTEN)
    _forge(_chunk_texts(root), _chunk_texts(root), root / "shards/planted/embeddings")
    git(root, "add", "-f", "shards/planted")
    git(root, "commit", "-q", "-m", "plant a shard cache")  # shards/honest stays untracked

    log = _cli(
        root, "cache", "merge", "--model-dir", str(MODEL_DIR), "--into", "merged",
        "shards/honest", "shards/planted",
    )  # fmt: skip

    planted = "shards/planted/embeddings/embeddings.sqlite3"
    assert f"warning: {planted}: not merged: git tracks it" in log
    assert "merged 1 cache(s) into merged: 8 new vectors, 8 in all" in log


def test_a_shard_row_copied_under_another_texts_key_is_not_merged(tmp_path: Path) -> None:
    root = tmp_path / "notes"
    _semantic_project(root)
    _cli(root, "embed", "--model-dir", str(MODEL_DIR), "--cache-dir", "shard")
    shard = "shard/embeddings/embeddings.sqlite3"
    recipe = embedding_recipe(verify_model(MODEL_DIR))
    # One row re-keyed for a text it was not computed from (closed: a shard is one file).
    with closing(sqlite3.connect(root / shard)) as db, db:
        db.execute(
            "UPDATE vectors SET key = ? WHERE key = (SELECT MIN(key) FROM vectors)",
            (row_key(recipe, text_key("# Kyoto\n\nQuarterly tax forms and receipts.")),),
        )

    log = _cli(root, "cache", "merge", "--model-dir", str(MODEL_DIR), "--into", "m", "shard")

    assert f"warning: {shard}: 1 row(s) not merged: not the vector of the text, model" in log
    assert "merged 1 cache(s) into m: 7 new vectors, 7 in all" in log


def test_a_cache_in_the_format_before_rows_recorded_their_text_is_rebuilt(tmp_path: Path) -> None:
    root = tmp_path / "notes"
    _semantic_project(root)
    (root / CACHE).parent.mkdir(parents=True)
    with closing(sqlite3.connect(root / CACHE)) as db, db:  # format 1: (model, text) -> vector
        db.execute(
            "CREATE TABLE embeddings (model_sha256 TEXT NOT NULL, text_sha256 BLOB NOT NULL, "
            "vector BLOB NOT NULL, PRIMARY KEY (model_sha256, text_sha256)) WITHOUT ROWID"
        )
        db.execute(
            "INSERT INTO embeddings VALUES (?, ?, ?)",
            (verify_model(MODEL_DIR), text_key("any text"), bytes(384 * 4)),
        )

    mrr, log = _run(root)

    assert (
        f"warning: the embedding cache {root / CACHE} is in cache format 1, this version of "
        "retrieval-eval reads format 2; emptied it: its texts are embedded again, once"
    ) in log
    assert mrr == 1.0
    with closing(sqlite3.connect(root / CACHE)) as db:
        assert db.execute("PRAGMA user_version").fetchone() == (2,)
        # the 8 notes' passages and the 4 queries, which are cached like passages
        assert db.execute("SELECT COUNT(*) FROM vectors").fetchone() == (8 + 4,)
    assert "warning" not in _run(root)[1]  # rebuilt once, then simply used


def test_a_committed_vector_store_in_persist_dir_is_refused_not_searched(tmp_path: Path) -> None:
    """`persist_dir` keeps a whole chromadb collection, reused when its fingerprint matches;
    the fingerprint is computed from public inputs, so a committed store could carry any
    vectors under the rewritten corpus's fingerprint."""
    import chromadb

    from retrieval_eval.retrieval.builtin.dense import PERSISTENT_COLLECTION, DenseRetriever

    root = tmp_path / "notes"
    _semantic_project(root)
    config = SEMANTIC_CONFIG + '\n[retrievers.dense]\npersist_dir = "vectors"\n'
    write(root, {"retrieval-eval.toml": config})
    assert _run(root)[0] == 1.0  # the store now holds the original notes' vectors
    write(root, REWRITTEN)
    fingerprint = DenseRetriever(DenseConfig(model_dir=MODEL_DIR))._fingerprint(
        load_corpus(root / "datasets" / "corpus"), verify_model(MODEL_DIR)
    )
    store = chromadb.PersistentClient(path=str(root / "vectors"))
    store.get_collection(PERSISTENT_COLLECTION).modify(metadata={"fingerprint": fingerprint})
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "reword four notes (and a vector store)")

    result = run_cli(root, "run", "--quiet", "--model-dir", str(MODEL_DIR))

    assert result.returncode == 2, result.log  # before: 0, MRR@10 1.000 from the old vectors
    assert "retrievers.dense.persist_dir: git tracks files in it" in result.stderr
