"""Settings of the vector engines configured by table: ``[retrievers.qdrant]``,
``[retrievers.lancedb]`` and ``[retrievers.milvus]``.

Each engine is reached at a location (``url``: a server's URL, or LanceDB's database URI)
given in the file or, with ``url_env``, named by environment variable, and a secret
(``api_key_env``, ``token_env``) is always named by environment variable. Both are resolved
once at the edge by :func:`with_engine_environment` into private attributes, so they
never appear in ``model_dump()``, a baseline, a report or a fingerprint. On a pull request
the keys that bound what it may reach or spend (``url``, ``url_env``, ``api_key_env``,
``token_env``, ``timeout_s``, ``local_dir``, ``ann_fidelity_queries``) are the base
commit's, by their names (config/table.py). With no location
at all the engine runs embedded, in a folder under the run's cache folder
(``local_path``): a Qdrant local-mode folder, a LanceDB folder, a Milvus Lite file's folder.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit

from pydantic import Field, PrivateAttr, SecretStr, field_validator, model_validator

from retrieval_eval.errors import ConfigError
from retrieval_eval.retrieval.external.services_config import _AnnFidelity, _check_env_name

ENGINES: tuple[str, ...] = ("qdrant", "lancedb", "milvus")
# Where each engine keeps its embedded store under the run's cache folder.
LOCAL_STORE = {"qdrant": "qdrant", "lancedb": "lancedb", "milvus": "milvus"}
# What the chunks of index = "ours" are stored under: the name's prefix (the corpus,
# chunking and model fingerprint follows it), and the payload keys.
OURS_PREFIX = "retrieval_eval"
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]{0,199}$")


class EngineConfig(_AnnFidelity):
    """What every engine table shares.

    ``index = "ours"`` chunks and embeds the corpus with ``[retrievers.dense]``'s model into
    a collection named ``<collection>-<fingerprint>`` (reused while corpus, chunking and
    model are unchanged); ``"existing"`` searches the team's own ``collection``, whose
    vectors must be that model's. There a record's document id is the payload field
    ``id_key`` (unset: the record's own id), its text ``text_key``, and a fixture's tag
    filter matches records whose ``tag_key`` array holds ANY of the tags.
    """

    index: Literal["ours", "existing"] = "ours"
    collection: str | None = None
    id_key: str | None = None
    text_key: str | None = None
    tag_key: str = "tags"
    timeout_s: float = Field(default=30.0, gt=0, le=3600)
    # The embedded store's folder; unset: in the run's cache folder.
    local_dir: Path | None = None
    _location: str | None = PrivateAttr(default=None)
    _location_missing: str | None = PrivateAttr(default=None)
    _secret: SecretStr | None = PrivateAttr(default=None)
    _secret_missing: str | None = PrivateAttr(default=None)

    @field_validator("collection")
    @classmethod
    def _collection_name(cls, name: str | None) -> str | None:
        if name is not None and not _NAME.match(name):
            raise ValueError(
                f"{name!r} is not a collection name (letters, digits, _ and -, "
                "starting with a letter or _)"
            )
        return name

    @model_validator(mode="after")
    def _existing_needs_collection(self) -> EngineConfig:
        if self.index == "existing" and not self.collection:
            raise ValueError('index = "existing" needs collection (the name in the engine)')
        for key in ("id_key", "text_key"):
            if self.index == "ours" and getattr(self, key) is not None:
                raise ValueError(f'{key} applies to index = "existing" only')
        return self

    # --- set by the engine's own table --------------------------------------------------

    def location_setting(self) -> tuple[str | None, str | None]:
        """(the location given in the file, the variable naming it); the engine's keys."""
        raise NotImplementedError

    def secret_variable(self) -> str | None:
        raise NotImplementedError

    # --- resolved ---------------------------------------------------------------------

    def location(self, who: str) -> str | None:
        """Where the engine is served; None: embedded, in ``local_path``."""
        if self._location_missing is not None:
            raise ConfigError(
                f"{who}: the environment variable {self._location_missing} is not set "
                "(set it in the workflow, or remove the *_env key to run the engine embedded "
                "in the cache folder)"
            )
        if self._location is not None:
            return self._location
        given, _ = self.location_setting()
        return given

    def secret(self, who: str) -> str | None:
        if self._secret_missing is not None:
            raise ConfigError(
                f"{who}: the environment variable {self._secret_missing} is not set "
                "(pass the secret to the step's env)"
            )
        return None if self._secret is None else self._secret.get_secret_value()

    def local_path(self, engine: str, cache_dir: Path | None) -> Path | None:
        """The embedded store: ``local_dir``, else under the run's cache folder (None when the
        run keeps no cache folder: the retriever then uses a folder of its own)."""
        if self.local_dir is not None:
            return self.local_dir
        return None if cache_dir is None else cache_dir / LOCAL_STORE[engine]


def _check_url(url: str | None) -> str | None:
    if url is None:
        return None
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"{url!r} must be an http:// or https:// URL with a host")
    if parts.username or parts.password:
        raise ValueError(
            "put credentials in the *_env secret key, not in the URL (URLs get logged)"
        )
    return url


class _LocatedEngineConfig(EngineConfig):
    """An engine reached at ``url`` or at the URL in the variable ``url_env`` (one of them,
    or neither: the engine runs embedded in the cache folder)."""

    url: str | None = None
    url_env: str | None = None

    @field_validator("url_env")
    @classmethod
    def _url_env(cls, name: str | None) -> str | None:
        return None if name is None else _check_env_name(name)

    @model_validator(mode="after")
    def _one_location(self) -> _LocatedEngineConfig:
        if self.url is not None and self.url_env is not None:
            raise ValueError("set one of url or url_env, not both")
        return self

    def location_setting(self) -> tuple[str | None, str | None]:
        return self.url, self.url_env


class QdrantConfig(_LocatedEngineConfig):
    """Qdrant through qdrant-client: a server at ``url`` (or ``url_env``), with the API key
    in ``api_key_env``; neither: local mode in the cache folder (exact search)."""

    api_key_env: str | None = None
    # The named vector of an existing collection with several (unset: its only vector).
    vector_name: str | None = None

    @field_validator("url")
    @classmethod
    def _url(cls, url: str | None) -> str | None:
        return _check_url(url)

    @field_validator("api_key_env")
    @classmethod
    def _env(cls, name: str | None) -> str | None:
        return None if name is None else _check_env_name(name)

    def secret_variable(self) -> str | None:
        return self.api_key_env


class LanceDbConfig(_LocatedEngineConfig):
    """LanceDB, embedded: a folder (``local_dir``, else the cache folder) or a ``url``
    (``url_env``) such as ``s3://bucket/db`` or LanceDB Cloud's ``db://``, with the API
    key in ``api_key_env``."""

    api_key_env: str | None = None
    vector_column: str = "vector"

    @field_validator("api_key_env")
    @classmethod
    def _env(cls, name: str | None) -> str | None:
        return None if name is None else _check_env_name(name)

    @model_validator(mode="after")
    def _no_credentials_in_url(self) -> LanceDbConfig:
        if self.url is not None and "@" in (urlsplit(self.url).netloc or ""):
            raise ValueError("put credentials in api_key_env, not in the URL (URLs get logged)")
        return self

    def secret_variable(self) -> str | None:
        return self.api_key_env


class MilvusConfig(_LocatedEngineConfig):
    """Milvus through pymilvus: a server at ``url`` (or ``url_env``), with the token in
    ``token_env``; neither: Milvus Lite in a file in the cache folder."""

    token_env: str | None = None
    vector_field: str = "vector"

    @field_validator("url")
    @classmethod
    def _url(cls, url: str | None) -> str | None:
        return _check_url(url)

    @field_validator("token_env")
    @classmethod
    def _env(cls, name: str | None) -> str | None:
        return None if name is None else _check_env_name(name)

    def secret_variable(self) -> str | None:
        return self.token_env


ENGINE_CONFIGS: dict[str, type[EngineConfig]] = {
    "qdrant": QdrantConfig,
    "lancedb": LanceDbConfig,
    "milvus": MilvusConfig,
}


def with_engine_environment(table: EngineConfig, *, environ: Mapping[str, str]) -> EngineConfig:
    """A copy with its location and secret read from ``environ`` (only the edges call this)."""
    table = table.model_copy()
    _, location_variable = table.location_setting()
    if location_variable is not None:
        value = environ.get(location_variable, "").strip()
        table._location = value or None
        table._location_missing = None if value else location_variable
    secret_variable = table.secret_variable()
    if secret_variable is not None:
        value = environ.get(secret_variable, "").strip()
        table._secret = SecretStr(value) if value else None
        table._secret_missing = None if value else secret_variable
    return table
