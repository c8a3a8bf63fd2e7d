"""Postgres: pgvector for dense search, tsvector for keyword search, fused by RRF.

``index = "ours"`` builds a schema ``retrieval_eval_<fingerprint>`` holding one
row per chunk (the chunks and vectors of ``dense``, with the model
``[retrievers.dense] model`` names, queries embedded with its query prefix): a
``vector(<the model's dimensions>)`` column with an HNSW index (cosine, ``<=>``),
a generated ``tsvector`` column with a GIN index, and a ``text[]`` of the document's
tags with a GIN index.
The fingerprint covers corpus, chunking, model, text search configuration and
HNSW parameters; a complete schema with the same fingerprint is reused (its
``meta`` row is written last, so an interrupted build is rebuilt), and it is
dropped at the end when ``keep_schema = false``.

- dense: ``ORDER BY embedding <=> q``, score = 1 − cosine distance. With
  ``search = "hnsw"`` the HNSW index answers (approximate; ``hnsw.ef_search``
  at least the rows asked for, iterative scans so filters still fill k); with
  ``"exact"`` index scans are disabled, so every row is compared.
- keyword: rows matching ``tsv @@ q``, where q ORs the query's lexemes
  (``keyword_match = "any"``, the default) or is ``websearch_to_tsquery``'s AND
  (``"all"``), ranked by ``keyword_rank(tsv, q, keyword_normalization)``
  (default ``ts_rank(tsv, q, 1)``: saturating word counts, divided by 1 + log of
  the chunk's length).
- tags: ``tags && filter`` (ANY of the tags). A filter no chunk carries
  matches no row, so the result is empty, never an unfiltered search.
- Chunks are fetched in growing batches until k distinct documents are found;
  a document ranks by its best chunk, ties by document id, as in ``dense``.

``index = "existing"`` runs the user's ``dense_sql`` / ``keyword_sql`` with
``%(query)s``, ``%(embedding)s`` (a pgvector ``vector``), ``%(k)s`` and
``%(tags)s`` (``text[]``, empty when unfiltered); rows are ``(id, score[, text])``.

Every search runs in a READ ONLY transaction; ``statement_timeout`` bounds every
statement (ten times ``timeout_s`` while building the index) and
``connect_timeout`` the connection. The DSN never appears in a message: psycopg's
errors are shown with the DSN and its password masked.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

import psycopg
from pgvector.psycopg import register_vector
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict

from retrieval_eval.errors import ConfigError, RetrievalEvalError
from retrieval_eval.index.chunking import Chunk, chunk_corpus
from retrieval_eval.index.embedding import MiniLMEmbedding
from retrieval_eval.index.embedding_cache import EmbeddingCache
from retrieval_eval.index.model_catalog import AUTO_MODEL, DEFAULT_MODEL, model_spec
from retrieval_eval.load.documents import Corpus
from retrieval_eval.retrieval.answers import normalise_hits
from retrieval_eval.retrieval.base import AnnFidelity, Hit, SearchResult
from retrieval_eval.retrieval.builtin.dense import chunk_cap, model_token_spans
from retrieval_eval.retrieval.config import DenseConfig
from retrieval_eval.retrieval.defaults import dense_for_corpus
from retrieval_eval.retrieval.external.ann_fidelity import Ranking, measure_fidelity
from retrieval_eval.retrieval.external.services_config import PostgresConfig
from retrieval_eval.retrieval.fusion import reciprocal_rank_fusion

SCHEMA_PREFIX = "retrieval_eval_"
_LAYOUT_VERSION = 1  # bump when the schema's tables change
_BUILD_TIMEOUT_FACTOR = 10
_PROBE_QUERY = "retrieval-eval connection check"
_COPY_BATCH = 1024
_LABEL = "retrievers.postgres"
# Exact search: pgvector's indexes are reached by index scans only, so with those off the
# planner compares every row (ORDER BY distance over a sequential scan).
_EXACT = (("enable_indexscan", "off"),)
_ANN_METHODS = {"hnsw": "HNSW", "ivfflat": "IVFFlat"}


class PostgresRetriever:
    name = "postgres"

    def __init__(self, config: PostgresConfig, dense: DenseConfig):
        if dense.model_dir is None:
            raise ConfigError(f"{_LABEL}: the embedding model folder is not set")
        self.config = config
        self.dense = dense
        # "auto" unresolved (a retriever built outside a run): chosen in index(), by the corpus.
        self.spec = model_spec(DEFAULT_MODEL if dense.model == AUTO_MODEL else dense.model)
        self._dsn = config.resolved_dsn()
        self._conn: psycopg.Connection[Any] | None = None
        self._embedding: MiniLMEmbedding | None = None
        self._schema: str | None = None
        self._model_sha256: str | None = None
        self._total = 0
        self._iterative_scan = False

    # --- the Retriever protocol ------------------------------------------------------

    def index(self, corpus: Corpus) -> None:
        self.close()
        if self.dense.model == AUTO_MODEL:
            self.dense = dense_for_corpus(self.dense, len(corpus.documents))
            self.spec = model_spec(self.dense.model)
        self._conn = self._connect()
        if "dense" in self.config.sides():
            assert self.dense.model_dir is not None
            cache = EmbeddingCache(self.dense.cache_dir) if self.dense.cache_dir else None
            self._embedding = MiniLMEmbedding(
                self.dense.model_dir,
                cache,
                intra_op_threads=self.dense.threads,
                batch_size=self.dense.batch_size,
                model=self.spec.name,
            )
            self._model_sha256 = self._embedding.model_sha256
            self._prepare_pgvector()
        try:
            if self.config.index == "ours":
                self._build(corpus)
            else:
                self._probe()
        finally:
            # Queries always go through the model, as in `dense`.
            if self._embedding is not None and self._embedding.cache is not None:
                self._embedding.cache.close()
                self._embedding.cache = None

    def search(self, query: str, k: int, tags: Sequence[str] = ()) -> SearchResult:
        if self._conn is None:
            raise RetrievalEvalError(f"{_LABEL}: search() called before index()")
        if k <= 0:
            return SearchResult(hits=())
        sides = self.config.sides()
        if len(sides) == 1:
            return SearchResult(hits=self._side(sides[0], query, k, tags))
        depth = max(k, self.config.depth)
        fused = reciprocal_rank_fusion(
            [(self._side(side, query, depth, tags), 1.0) for side in sides],
            rrf_k=self.config.rrf_k,
            k=k,
        )
        return SearchResult(hits=fused)

    def describe(self) -> Mapping[str, object]:
        config = self.config
        described: dict[str, object] = {
            "retriever": self.name,
            "index": config.index,
            "mode": config.mode,
        }
        if config.mode == "hybrid":
            described.update(rrf_k=config.rrf_k, depth=config.depth)
        if config.index == "existing":
            for side in config.sides():
                described[f"{side}_sql"] = getattr(config, f"{side}_sql")
        else:
            described.update(
                schema=self._schema,
                text_search_config=config.text_search_config,
                keyword_match=config.keyword_match,
                keyword_rank=config.keyword_rank,
                keyword_normalization=config.keyword_normalization,
                chunk_tokens=self.dense.chunk_tokens,
                chunk_overlap=self.dense.chunk_overlap,
            )
            if "dense" in config.sides():
                described.update(
                    search=config.search,
                    hnsw_m=config.hnsw_m,
                    hnsw_ef_construction=config.hnsw_ef_construction,
                    ef_search=config.ef_search,
                )
        if "dense" in config.sides():
            described.update(model=self.spec.name, model_sha256=self._model_sha256)
        return described

    def ann_fidelity(
        self, queries: Sequence[tuple[str, Sequence[str]]], k: int
    ) -> AnnFidelity | None:
        """Dense search as configured against the same statement with index scans off
        (every row compared), on the first ``ann_fidelity_queries`` queries."""
        config = self.config
        if self._conn is None or "dense" not in config.sides():
            return None
        if config.index == "ours":
            if config.search == "exact":
                return None  # nothing approximate to measure
            kind = "HNSW"

            def ranked(exact: bool) -> Ranking:
                return lambda query, tags, n: [
                    hit.doc_id for hit in self._ours_dense(query, n, tags, exact=exact)
                ]

            approximate, exact = ranked(False), ranked(True)
        else:
            found = self._index_method(queries, k)
            if found is None:
                return None
            kind = found

            def user(settings: Sequence[tuple[str, str]]) -> Ranking:
                return lambda query, tags, n: [
                    hit.doc_id for hit in self._existing("dense", query, n, tags, settings)
                ]

            approximate, exact = user(()), user(_EXACT)
        return measure_fidelity(
            queries,
            k,
            sample=config.fidelity_sample(config.index),
            index=f"{kind}, postgres",
            approximate=approximate,
            exact=exact,
        )

    def close(self) -> None:
        conn, self._conn = self._conn, None
        if conn is None:
            return
        try:
            if self._schema is not None and not self.config.keep_schema:
                conn.execute(
                    sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(self._schema))
                )
        finally:
            conn.close()

    # --- connecting --------------------------------------------------------------------

    def _connect(self) -> psycopg.Connection[Any]:
        try:
            conn = psycopg.connect(
                self._dsn,
                autocommit=True,
                connect_timeout=max(1, math.ceil(self.config.timeout_s)),
                application_name="retrieval-eval",
            )
        except psycopg.Error as error:
            raise ConfigError(f"{_LABEL}: cannot connect: {self._redact(error)}") from None
        self._set_timeout(conn, self.config.timeout_s)
        return conn

    def _set_timeout(self, conn: psycopg.Connection[Any], seconds: float) -> None:
        conn.execute(
            "SELECT set_config('statement_timeout', %s, false)", [str(int(seconds * 1000))]
        )

    def _prepare_pgvector(self) -> None:
        conn = self._require()
        version = conn.execute(
            "SELECT extversion FROM pg_extension WHERE extname = 'vector'"
        ).fetchone()
        if version is None and self.config.index == "ours":
            try:
                conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
            except psycopg.Error as error:
                raise ConfigError(
                    f"{_LABEL}: pgvector is not installed in this database and could not be "
                    f"created ({self._redact(error)}); run CREATE EXTENSION vector as its owner"
                ) from None
            version = conn.execute(
                "SELECT extversion FROM pg_extension WHERE extname = 'vector'"
            ).fetchone()
        if version is None:
            raise ConfigError(
                f"{_LABEL}: the pgvector extension is not installed in this database "
                "(CREATE EXTENSION vector)"
            )
        self._iterative_scan = _version(str(version[0])) >= (0, 8)
        register_vector(conn)

    # --- ours: the schema --------------------------------------------------------------

    def _build(self, corpus: Corpus) -> None:
        conn = self._require()
        assert self.dense.model_dir is not None
        chunks = chunk_corpus(
            corpus,
            max_tokens=chunk_cap(self.dense.chunk_tokens, self.spec),
            overlap=self.dense.chunk_overlap,
            spans=model_token_spans(self.dense.model_dir, self.spec),
        )
        self._total = len(chunks)
        with_vectors = self._embedding is not None
        fingerprint = self._fingerprint(corpus, with_vectors)
        schema = SCHEMA_PREFIX + fingerprint[:16]
        self._schema = schema
        if self._complete(schema, fingerprint, len(chunks)):
            return
        name = sql.Identifier(schema)
        self._set_timeout(conn, self.config.timeout_s * _BUILD_TIMEOUT_FACTOR)
        try:
            with conn.transaction():
                conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(name))
                conn.execute(sql.SQL("CREATE SCHEMA {}").format(name))
                vector_column = (
                    sql.SQL(" embedding vector({}),").format(sql.Literal(self.spec.dimensions))
                    if with_vectors
                    else sql.SQL("")  # keyword only: no model, no pgvector needed
                )
                conn.execute(
                    sql.SQL(
                        "CREATE TABLE {}.chunks ("
                        " id integer PRIMARY KEY, doc_id text NOT NULL, text text NOT NULL,"
                        " tags text[] NOT NULL,{}"
                        " tsv tsvector GENERATED ALWAYS AS"
                        " (to_tsvector({}::regconfig, text)) STORED)"
                    ).format(name, vector_column, sql.Literal(self.config.text_search_config))
                )
                self._load(schema, corpus, chunks)
                if with_vectors:
                    conn.execute(
                        sql.SQL(
                            "CREATE INDEX ON {}.chunks USING hnsw (embedding vector_cosine_ops)"
                            " WITH (m = {}, ef_construction = {})"
                        ).format(
                            name,
                            sql.Literal(self.config.hnsw_m),
                            sql.Literal(self.config.hnsw_ef_construction),
                        )
                    )
                conn.execute(sql.SQL("CREATE INDEX ON {}.chunks USING gin (tsv)").format(name))
                conn.execute(sql.SQL("CREATE INDEX ON {}.chunks USING gin (tags)").format(name))
                conn.execute(
                    sql.SQL("CREATE TABLE {}.meta (fingerprint text, chunk_count integer)").format(
                        name
                    )
                )
                conn.execute(
                    sql.SQL("INSERT INTO {}.meta VALUES (%s, %s)").format(name),
                    [fingerprint, len(chunks)],
                )
        except psycopg.Error as error:
            raise RetrievalEvalError(
                f"{_LABEL}: building schema {schema} failed: {self._redact(error)}"
            ) from None
        finally:
            self._set_timeout(conn, self.config.timeout_s)
        conn.execute(sql.SQL("ANALYZE {}.chunks").format(name))

    def _complete(self, schema: str, fingerprint: str, chunk_count: int) -> bool:
        conn = self._require()
        exists = conn.execute(
            "SELECT 1 FROM information_schema.tables"
            " WHERE table_schema = %s AND table_name = 'meta'",
            [schema],
        ).fetchone()
        if exists is None:
            return False
        row = conn.execute(
            sql.SQL("SELECT fingerprint, chunk_count FROM {}.meta").format(sql.Identifier(schema))
        ).fetchone()
        return row is not None and row[0] == fingerprint and row[1] == chunk_count

    def _load(self, schema: str, corpus: Corpus, chunks: Sequence[Chunk]) -> None:
        conn = self._require()
        tags = {doc.id: list(doc.tags) for doc in corpus.documents}
        columns = ["int4", "text", "text", "text[]"]
        copy_sql = sql.SQL("COPY {}.chunks (id, doc_id, text, tags{}) FROM STDIN (FORMAT BINARY)")
        with_vectors = self._embedding is not None
        statement = copy_sql.format(
            sql.Identifier(schema), sql.SQL(", embedding" if with_vectors else "")
        )
        with conn.cursor() as cursor, cursor.copy(statement) as copy:
            copy.set_types([*columns, "vector"] if with_vectors else columns)
            for start in range(0, len(chunks), _COPY_BATCH):
                batch = chunks[start : start + _COPY_BATCH]
                vectors: Iterable[Any] = (
                    self._embedding.embed([chunk.text for chunk in batch])
                    if self._embedding is not None
                    else [None] * len(batch)
                )
                for offset, (chunk, vector) in enumerate(zip(batch, vectors, strict=True)):
                    row = [start + offset, chunk.doc_id, chunk.text, tags[chunk.doc_id]]
                    copy.write_row([*row, vector] if with_vectors else row)

    def _fingerprint(self, corpus: Corpus, with_vectors: bool) -> str:
        settings = [
            _LAYOUT_VERSION,
            corpus.fingerprint(),
            self._model_sha256 if with_vectors else None,
            self.dense.chunk_tokens,
            self.dense.chunk_overlap,
            self.config.text_search_config,
            self.config.hnsw_m if with_vectors else None,
            self.config.hnsw_ef_construction if with_vectors else None,
        ]
        return hashlib.sha256(json.dumps(settings).encode("utf-8")).hexdigest()

    # --- searching ---------------------------------------------------------------------

    def _side(self, side: str, query: str, k: int, tags: Sequence[str]) -> tuple[Hit, ...]:
        if self.config.index == "existing":
            return self._existing(side, query, k, tags)
        if side == "dense":
            return self._ours_dense(query, k, tags)
        return self._ours_keyword(query, k, tags)

    def _ours_dense(
        self, query: str, k: int, tags: Sequence[str], *, exact: bool | None = None
    ) -> tuple[Hit, ...]:
        assert self._embedding is not None and self._schema is not None
        exact = self.config.search == "exact" if exact is None else exact
        vector = self._embedding.embed_queries([query])[0]
        where = sql.SQL("WHERE tags && %(tags)s::text[]" if tags else "")
        statement = sql.SQL(
            "SELECT id, doc_id, text, 1 - (embedding <=> %(vector)s) AS score"
            " FROM {}.chunks {} ORDER BY embedding <=> %(vector)s LIMIT %(n)s"
        ).format(sql.Identifier(self._schema), where)

        def settings(rows: int) -> list[tuple[str, str]]:
            if exact:
                return list(_EXACT)
            chosen = [("hnsw.ef_search", str(min(1000, max(self.config.ef_search, rows))))]
            if self._iterative_scan:
                chosen.append(("hnsw.iterative_scan", "strict_order"))
            return chosen

        return self._collapse(
            lambda rows: self._read(
                statement, {"vector": vector, "tags": list(tags), "n": rows}, settings(rows)
            ),
            k,
        )

    def _ours_keyword(self, query: str, k: int, tags: Sequence[str]) -> tuple[Hit, ...]:
        assert self._schema is not None
        if self.config.keyword_match == "all":
            tsquery = sql.SQL("websearch_to_tsquery(%(config)s::regconfig, %(query)s)")
        else:
            # The query's own lexemes (stemmed by the same configuration), ORed.
            tsquery = sql.SQL(
                "to_tsquery('simple', (SELECT"
                " coalesce(string_agg(quote_literal(lexeme), ' | '), '')"
                " FROM unnest(to_tsvector(%(config)s::regconfig, %(query)s))))"
            )
        where = sql.SQL("AND tags && %(tags)s::text[]" if tags else "")
        statement = sql.SQL(
            "SELECT id, doc_id, text, {}(tsv, q, {}) AS score"
            " FROM {}.chunks, {} AS q WHERE tsv @@ q {}"
            " ORDER BY score DESC, id LIMIT %(n)s"
        ).format(
            sql.Identifier(self.config.keyword_rank),
            sql.Literal(self.config.keyword_normalization),
            sql.Identifier(self._schema),
            tsquery,
            where,
        )
        parameters = {"config": self.config.text_search_config, "query": query, "tags": list(tags)}
        return self._collapse(
            lambda rows: self._read(statement, {**parameters, "n": rows}, []),
            k,
        )

    def _collapse(self, fetch: Any, k: int) -> tuple[Hit, ...]:
        """Fetch chunks in growing batches until k distinct documents (or all rows)."""
        wanted = max(1, min(self._total, k * 4))
        while True:
            rows = fetch(wanted)
            best: dict[str, tuple[float, int, str]] = {}
            for chunk_id, doc_id, text, score in rows:
                value = float(score)
                if doc_id not in best or (-value, chunk_id) < (-best[doc_id][0], best[doc_id][1]):
                    best[doc_id] = (value, chunk_id, text)
            if len(best) >= k or len(rows) < wanted or wanted >= self._total:
                break
            wanted = min(self._total, wanted * 4)
        ranked = sorted(best.items(), key=lambda item: (-item[1][0], item[0]))[:k]
        return tuple(Hit(doc_id, score, text) for doc_id, (score, _, text) in ranked)

    def _existing(
        self,
        side: str,
        query: str,
        k: int,
        tags: Sequence[str],
        settings: Sequence[tuple[str, str]] = (),
    ) -> tuple[Hit, ...]:
        rows = self._run_user_sql(side, query, k, tags, settings)
        who = f"{_LABEL}.{side}_sql"
        hits: list[Hit] = []
        for position, row in enumerate(rows):
            if len(row) < 2:
                raise RetrievalEvalError(
                    f"{who}: rows must be (id, score[, text]); row {position} has {len(row)} column"
                )
            doc_id, score = row[0], row[1]
            text = row[2] if len(row) > 2 and row[2] is not None else ""
            hits.append(Hit(str(doc_id), float(score) if score is not None else math.nan, text))
        return normalise_hits(hits, k, cost_usd=0.0, who=who).hits

    def _run_user_sql(
        self,
        side: str,
        query: str,
        k: int,
        tags: Sequence[str],
        settings: Sequence[tuple[str, str]] = (),
    ) -> list[Any]:
        text: str | None = getattr(self.config, f"{side}_sql")
        assert text is not None
        parameters: dict[str, Any] = {"query": query, "k": k, "tags": list(tags)}
        if self._embedding is not None:
            parameters["embedding"] = self._embedding.embed_queries([query])[0]
        statement = sql.SQL(text)  # the user's SQL, run read-only
        return self._read(statement, parameters, settings, who=f"{side}_sql")

    def _index_method(self, queries: Sequence[tuple[str, Sequence[str]]], k: int) -> str | None:
        """The approximate index ``dense_sql`` searches, from its plan (pgvector's
        ``hnsw`` or ``ivfflat``); None when its plan uses neither (it is exact already)."""
        text = self.config.dense_sql
        assert text is not None and self._embedding is not None
        query = queries[0][0] if queries else _PROBE_QUERY
        parameters: dict[str, Any] = {
            "query": query,
            "k": k,
            "tags": [],
            "embedding": self._embedding.embed_queries([query])[0],
        }
        explain = sql.SQL("EXPLAIN (FORMAT JSON) ") + sql.SQL(text)
        rows = self._read(explain, parameters, [], who="dense_sql (EXPLAIN)")
        names = sorted(set(_index_names(rows[0][0] if rows else [])))
        if not names:
            return None
        methods = self._read(
            sql.SQL(
                "SELECT DISTINCT am.amname FROM pg_class c JOIN pg_am am ON c.relam = am.oid"
                " WHERE c.relname = ANY(%(names)s)"
            ),
            {"names": names},
            [],
            who="dense_sql (its index)",
        )
        found = {str(row[0]) for row in methods} & set(_ANN_METHODS)
        return " + ".join(_ANN_METHODS[m] for m in sorted(found)) if found else None

    def _probe(self) -> None:
        """Run each configured SQL once on a fixed text: a wrong table, column, type or
        vector dimension fails here, before any query is timed."""
        for side in self.config.sides():
            try:
                rows = self._run_user_sql(side, _PROBE_QUERY, 1, ())
            except RetrievalEvalError as error:
                raise ConfigError(error.message) from None
            if rows and len(rows[0]) < 2:
                raise ConfigError(
                    f"{_LABEL}.{side}_sql must return (id, score[, text]); "
                    f"it returned {len(rows[0])} column"
                )

    def _read(
        self,
        statement: sql.SQL | sql.Composed,
        parameters: Mapping[str, Any],
        settings: Sequence[tuple[str, str]],
        *,
        who: str = "search",
    ) -> list[Any]:
        """One statement in a READ ONLY transaction, with transaction-local settings."""
        conn = self._require()
        try:
            with conn.cursor() as cursor:
                cursor.execute("BEGIN READ ONLY")
                try:
                    for name, value in settings:
                        cursor.execute("SELECT set_config(%s, %s, true)", [name, value])
                    cursor.execute(statement, parameters)
                    rows = cursor.fetchall() if cursor.description else []
                finally:
                    cursor.execute("ROLLBACK")
        except psycopg.errors.QueryCanceled:
            raise RetrievalEvalError(
                f"{_LABEL}: {who} took longer than timeout_s = {self.config.timeout_s:g} s"
            ) from None
        except psycopg.Error as error:
            raise RetrievalEvalError(f"{_LABEL}: {who} failed: {self._redact(error)}") from None
        return rows

    def _require(self) -> psycopg.Connection[Any]:
        if self._conn is None:
            raise RetrievalEvalError(f"{_LABEL}: not connected")
        return self._conn

    def _redact(self, error: BaseException) -> str:
        """psycopg's message on one line, with the DSN and its password masked."""
        message = " ".join(str(error).split()) or type(error).__name__
        secrets = [self._dsn]
        try:
            password = conninfo_to_dict(self._dsn).get("password")
        except psycopg.Error:
            password = None
        if password:
            secrets.append(str(password))
        for secret in secrets:
            if secret:
                message = message.replace(secret, "***")
        return message


def _index_names(plan: Any) -> Iterator[str]:
    """Every "Index Name" in an EXPLAIN (FORMAT JSON) plan."""
    if isinstance(plan, dict):
        name = plan.get("Index Name")
        if isinstance(name, str):
            yield name
        for value in plan.values():
            yield from _index_names(value)
    elif isinstance(plan, list):
        for value in plan:
            yield from _index_names(value)


def _version(text: str) -> tuple[int, ...]:
    parts: list[int] = []
    for piece in text.split("."):
        digits = "".join(ch for ch in piece if ch.isdigit())
        parts.append(int(digits) if digits else 0)
    return tuple(parts)
