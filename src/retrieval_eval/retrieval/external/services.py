"""The retrievers that live outside this process, built from their ``[retrievers.*]`` table.

Each builder imports its client library only when chosen, so ``bm25`` never pays
for psycopg or httpx, and a machine without the ``postgres`` extra can run
everything else.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from retrieval_eval.errors import ConfigError
from retrieval_eval.retrieval.base import Retriever
from retrieval_eval.retrieval.config import RetrieversConfig
from retrieval_eval.retrieval.external.engines_config import ENGINES, with_engine_environment
from retrieval_eval.retrieval.external.services_config import with_environment

SERVICE_RETRIEVERS: tuple[str, ...] = ("postgres", "chroma", "http", "run-file", *ENGINES)
_TABLE = {"postgres": "postgres", "chroma": "chroma", "http": "http", "run-file": "run_file"}


def build_service(name: str, config: RetrieversConfig) -> Retriever:
    if name in ENGINES:
        from retrieval_eval.retrieval.external.engines import build_engine

        return build_engine(name, config)
    table = getattr(config, _TABLE[name])
    if table is None:
        raise ConfigError(f"retriever `{name}` needs a [retrievers.{name}] table")
    if name == "postgres":
        try:
            from retrieval_eval.retrieval.external.postgres import PostgresRetriever
        except ImportError as error:
            raise ConfigError(
                f"retriever `postgres` needs the postgres extra: "
                f"pip install 'retrieval-eval[postgres]' ({error})"
            ) from None
        return PostgresRetriever(table, config.dense)
    if name == "chroma":
        from retrieval_eval.retrieval.external.chroma_server import ChromaServerRetriever

        return ChromaServerRetriever(table, config.dense)
    if name == "http":
        from retrieval_eval.retrieval.external.http import HttpRetriever

        return HttpRetriever(table)
    from retrieval_eval.retrieval.external.run_file import RunFileRetriever

    return RunFileRetriever(table)


def with_service_environment(
    config: RetrieversConfig, *, workdir: Path, environ: Mapping[str, str]
) -> RetrieversConfig:
    """Read the services' secrets from ``environ`` and make the run file's path
    absolute (relative to ``workdir``). Called once, by the edges."""
    postgres, chroma, http = with_environment(
        config.postgres, config.chroma, config.http, environ=environ
    )
    updates: dict[str, object] = {"postgres": postgres, "chroma": chroma, "http": http}
    for engine in ENGINES:
        table = getattr(config, engine)
        if table is not None:
            updates[engine] = with_engine_environment(table, environ=environ)
    if config.run_file is not None and not config.run_file.path.is_absolute():
        updates["run_file"] = config.run_file.model_copy(
            update={"path": (workdir / config.run_file.path).resolve()}
        )
    return config.model_copy(update=updates)
