"""Settings of the retrievers that live outside this process: Postgres, a Chroma
server, an HTTP search service, and a precomputed run file.

Secrets (a DSN, auth headers) are named by environment variable in the file
(``dsn_env``, ``headers_env``) and resolved once at the edge by
:func:`with_environment`. Resolved values are kept in private attributes, so
they never appear in ``model_dump()``, a baseline, a report or a fingerprint.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    SecretStr,
    field_validator,
    model_validator,
)

from retrieval_eval.errors import ConfigError

# A Postgres text search configuration name, optionally schema-qualified.
_REGCONFIG = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)?$")
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_HEADER_NAME = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")  # an HTTP token (RFC 9110)
_SQL_PARAMETERS = ("query", "embedding", "k", "tags")
_PARAMETER = re.compile(r"%\((\w+)\)s")
# ANN fidelity's default sample on our own index: the first queries of each dataset.
# Exact search over a user's own table or collection can cost anything, so there it is
# measured only when asked for.
ANN_FIDELITY_SAMPLE = 20


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class _AnnFidelity(_Strict):
    """``ann_fidelity_queries``: how many queries of each dataset are also searched
    exactly, to report the approximate index's recall@k of exact search (0: never).
    Unset: ANN_FIDELITY_SAMPLE with index = "ours", 0 with "existing"."""

    ann_fidelity_queries: int | None = Field(default=None, ge=0)

    def fidelity_sample(self, index: str) -> int:
        if self.ann_fidelity_queries is not None:
            return self.ann_fidelity_queries
        return ANN_FIDELITY_SAMPLE if index == "ours" else 0


def _check_env_name(name: str) -> str:
    if not _ENV_NAME.fullmatch(name):  # match() would take a trailing newline
        raise ValueError(f"{name!r} is not an environment variable name")
    return name


def _check_headers_env(headers: dict[str, str]) -> dict[str, str]:
    for header, variable in headers.items():
        if not _HEADER_NAME.fullmatch(header):  # match() would take a trailing newline
            raise ValueError(f"{header!r} is not an HTTP header name")
        _check_env_name(variable)
    return headers


def _check_http_url(url: str) -> str:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"{url!r} must be an http:// or https:// URL with a host")
    if parts.username or parts.password:
        raise ValueError("put credentials in headers_env, not in the URL (URLs get logged)")
    return url


class _HeaderSecrets(_Strict):
    """``headers_env = {Authorization = "SEARCH_AUTH"}``: each header's value is read
    from the named environment variable at the edge."""

    headers_env: dict[str, str] = Field(default_factory=dict)
    _headers: dict[str, SecretStr] = PrivateAttr(default_factory=dict)
    _missing: tuple[str, ...] = PrivateAttr(default=())

    @field_validator("headers_env")
    @classmethod
    def _valid_headers(cls, headers: dict[str, str]) -> dict[str, str]:
        return _check_headers_env(headers)

    def headers(self, who: str) -> dict[str, str]:
        """The resolved headers; a named variable that was not set is an error here,
        when the retriever is built, not when the settings are loaded."""
        if self._missing:
            raise ConfigError(
                f"{who}.headers_env names {', '.join(self._missing)}, "
                "which is not set in the environment"
            )
        return {name: value.get_secret_value() for name, value in self._headers.items()}


class PostgresConfig(_AnnFidelity):
    """Postgres with pgvector (dense) and tsvector (keyword).

    ``index = "ours"`` builds a fingerprinted schema from the corpus; ``"existing"``
    runs the user's own ``dense_sql`` / ``keyword_sql`` against their tables.
    """

    dsn: SecretStr | None = None
    dsn_env: str | None = None
    index: Literal["ours", "existing"] = "ours"
    mode: Literal["dense", "keyword", "hybrid"] = "hybrid"
    text_search_config: str = "english"
    # "any" ORs the query's words (websearch_to_tsquery ANDs them): most documents
    # match few words of a natural-language question, so "all" matches almost nothing.
    keyword_match: Literal["all", "any"] = "any"
    # How matching rows are ranked: the function, and its normalization bit mask
    # (Postgres's: 1 divides by 1 + log(length), 2 by length, 4 by the mean harmonic
    # distance between extents (ts_rank_cd only), 8 by unique words, 16 by
    # 1 + log(unique words), 32 maps rank to rank / (rank + 1)). ts_rank saturates a
    # word's repeats (its k-th occurrence adds 1/k² of the first) and 1 discounts long
    # chunks: what BM25 gets from saturation and length normalisation, without idf.
    keyword_rank: Literal["ts_rank", "ts_rank_cd"] = "ts_rank"
    keyword_normalization: int = Field(default=1, ge=0, le=63)
    search: Literal["hnsw", "exact"] = "hnsw"
    hnsw_m: int = Field(default=16, ge=2, le=100)
    hnsw_ef_construction: int = Field(default=64, ge=4, le=1000)
    ef_search: int = Field(default=100, ge=1, le=1000)
    dense_sql: str | None = None
    keyword_sql: str | None = None
    rrf_k: int = Field(default=60, ge=1)
    depth: int = Field(default=100, ge=1)
    keep_schema: bool = True
    timeout_s: float = Field(default=30.0, gt=0, le=3600)
    _dsn: SecretStr | None = PrivateAttr(default=None)
    _dsn_missing: str | None = PrivateAttr(default=None)

    @field_validator("dsn_env")
    @classmethod
    def _env_name(cls, name: str | None) -> str | None:
        return None if name is None else _check_env_name(name)

    @field_validator("text_search_config")
    @classmethod
    def _regconfig(cls, name: str) -> str:
        if not _REGCONFIG.fullmatch(name):  # match() would take a trailing newline
            raise ValueError(f"{name!r} is not a text search configuration name (e.g. 'english')")
        return name

    @field_validator("dense_sql", "keyword_sql")
    @classmethod
    def _known_parameters(cls, sql: str | None) -> str | None:
        if sql is None:
            return None
        unknown = sorted(set(_PARAMETER.findall(sql)) - set(_SQL_PARAMETERS))
        if unknown:
            raise ValueError(
                f"unknown parameter(s) {', '.join(unknown)}; the SQL may use "
                + ", ".join(f"%({name})s" for name in _SQL_PARAMETERS)
            )
        return sql

    @model_validator(mode="after")
    def _consistent(self) -> PostgresConfig:
        if self.dsn is not None and self.dsn_env is not None:
            raise ValueError("set one of dsn or dsn_env, not both")
        if self.dsn is None and self.dsn_env is None:
            raise ValueError("set dsn_env (the environment variable holding the DSN) or dsn")
        sides = self.sides()
        if self.index == "ours":
            given = [name for name in ("dense_sql", "keyword_sql") if getattr(self, name)]
            if given:
                raise ValueError(f'{" and ".join(given)} need index = "existing"')
        else:
            needed = [f"{side}_sql" for side in sides if getattr(self, f"{side}_sql") is None]
            if needed:
                raise ValueError(f'index = "existing" with mode = {self.mode!r} needs {needed[0]}')
        return self

    def sides(self) -> tuple[str, ...]:
        return ("dense", "keyword") if self.mode == "hybrid" else (self.mode,)

    def resolved_dsn(self) -> str:
        if self._dsn_missing is not None:
            raise ConfigError(
                f"retrievers.postgres.dsn_env names {self._dsn_missing}, "
                "which is not set in the environment"
            )
        dsn = self._dsn if self._dsn is not None else self.dsn
        if dsn is None or not dsn.get_secret_value().strip():
            raise ConfigError("retrievers.postgres: the DSN is empty")
        return dsn.get_secret_value()


class ChromaConfig(_HeaderSecrets, _AnnFidelity):
    """A Chroma server reached over HTTP."""

    url: str = "http://127.0.0.1:8000"
    index: Literal["ours", "existing"] = "ours"
    collection: str | None = None
    tenant: str = "default_tenant"
    database: str = "default_database"
    id_metadata_key: str | None = None
    # index = "existing": the metadata key holding each record's tags as an array of
    # strings; a fixture's tag filter becomes {KEY: {"$contains": TAG}} (ANY of them).
    # Unset, tags are our own collections' boolean keys `tag:<name>`.
    tag_key: str | None = None
    timeout_s: int = Field(default=30, ge=1, le=3600)

    @field_validator("url")
    @classmethod
    def _url(cls, url: str) -> str:
        return _check_http_url(url)

    @model_validator(mode="after")
    def _collection_for_existing(self) -> ChromaConfig:
        if self.index == "existing" and not self.collection:
            raise ValueError('index = "existing" needs collection (the name on the server)')
        for key in ("id_metadata_key", "tag_key"):
            if self.index == "ours" and getattr(self, key) is not None:
                raise ValueError(f'{key} applies to index = "existing" only')
        if self.tag_key is not None and (not self.tag_key or self.tag_key.startswith("#")):
            raise ValueError(f"tag_key {self.tag_key!r} is not a metadata key")
        return self


class HttpConfig(_HeaderSecrets):
    """A search service: POST {"query", "k", "tags"} → {"hits": [...], "cost_usd"?}."""

    url: str
    timeout_s: float = Field(default=30.0, gt=0, le=3600)
    concurrency: int = Field(default=4, ge=1, le=64)
    retries: int = Field(default=3, ge=0, le=10)
    backoff_s: float = Field(default=0.5, ge=0, le=60)
    hits_path: str = "hits"
    id_field: str = "id"
    score_field: str = "score"
    text_field: str = "text"
    cost_field: str = "cost_usd"
    # The request body, as JSON text in which the string values "$query", "$k" and "$tags"
    # stand for the query, the number of hits and the fixture's tags (another API's own
    # shape: Elasticsearch's `_search`). Unset: {"query", "k", "tags"}. `filtered_body`
    # is sent for a fixture that filters by tags; unset, such a fixture needs "$tags" in
    # `body` (a filter is never dropped).
    body: str | None = None
    filtered_body: str | None = None

    @field_validator("body", "filtered_body")
    @classmethod
    def _template(cls, template: str | None) -> str | None:
        if template is None:
            return None
        import json

        try:
            parsed = json.loads(template)
        except json.JSONDecodeError as error:
            raise ValueError(f"is not JSON ({error.msg} at character {error.pos})") from None
        if not isinstance(parsed, dict):
            raise ValueError("must be a JSON object")
        if "$query" not in template:
            raise ValueError('must contain "$query", where the query goes')
        return template

    @model_validator(mode="after")
    def _filtered_needs_body(self) -> HttpConfig:
        if self.filtered_body is not None and self.body is None:
            raise ValueError("filtered_body needs body (the request for a query without tags)")
        return self

    @field_validator("url")
    @classmethod
    def _url(cls, url: str) -> str:
        return _check_http_url(url)

    @field_validator("hits_path", "id_field", "score_field", "text_field", "cost_field")
    @classmethod
    def _paths(cls, path: str) -> str:
        from retrieval_eval.retrieval.external.json_path import parse_path

        parse_path(path)
        return path


class RunFileConfig(_Strict):
    """A precomputed run: TREC's six columns, or JSON lines ``{"query_id", "hits"}``."""

    path: Path
    format: Literal["trec", "jsonl"] = "trec"


def with_environment(
    postgres: PostgresConfig | None,
    chroma: ChromaConfig | None,
    http: HttpConfig | None,
    *,
    environ: Mapping[str, str],
) -> tuple[PostgresConfig | None, ChromaConfig | None, HttpConfig | None]:
    """Copies with their secrets read from ``environ`` (only the edges call this)."""
    if postgres is not None and postgres.dsn_env is not None:
        variable = postgres.dsn_env
        value = environ.get(variable, "").strip()
        postgres = postgres.model_copy()
        postgres._dsn = SecretStr(value) if value else None
        postgres._dsn_missing = None if value else variable
    resolved: list[_HeaderSecrets | None] = []
    for table in (chroma, http):
        if table is None or not table.headers_env:
            resolved.append(table)
            continue
        table = table.model_copy()
        table._headers = {
            header: SecretStr(environ[variable])
            for header, variable in table.headers_env.items()
            if environ.get(variable)
        }
        table._missing = tuple(
            variable for variable in table.headers_env.values() if not environ.get(variable)
        )
        resolved.append(table)
    chroma_out, http_out = resolved
    assert chroma_out is None or isinstance(chroma_out, ChromaConfig)
    assert http_out is None or isinstance(http_out, HttpConfig)
    return postgres, chroma_out, http_out
