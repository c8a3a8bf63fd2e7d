"""The vector engines' tables ([retrievers.qdrant], [retrievers.lancedb],
[retrievers.milvus]): where each engine is (a URL in the file, or a variable naming it,
never both and never with credentials in it), its secret only by variable, resolved once
from the environment and kept out of every dump; and a collection that must be named."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from pydantic import ValidationError

from retrieval_eval.errors import ConfigError
from retrieval_eval.retrieval.external.engines_config import (
    ENGINE_CONFIGS,
    ENGINES,
    LanceDbConfig,
    MilvusConfig,
    QdrantConfig,
    with_engine_environment,
)

SECRET_KEY = {"qdrant": "api_key_env", "lancedb": "api_key_env", "milvus": "token_env"}
_hosts = st.sampled_from(["127.0.0.1", "qdrant.internal", "db.example.com:6333"])


@given(
    st.sampled_from(["http", "https", "ftp", "s3", ""]),
    st.sampled_from(["", "user@", "user:pw@"]),
    _hosts | st.just(""),
    st.sampled_from(["", "/", "/v1"]),
)
def test_a_server_url_is_http_with_a_host_and_no_credentials(
    scheme: str, credentials: str, host: str, path: str
) -> None:
    url = f"{scheme}://{credentials}{host}{path}" if scheme else f"{credentials}{host}{path}"
    fine = scheme in ("http", "https") and host != "" and credentials == ""
    for model in (QdrantConfig, MilvusConfig):
        if fine:
            assert model(url=url).location("retrievers.x") == url
        else:
            with pytest.raises(ValidationError) as raised:
                model(url=url)
            expected = (
                "not in the URL"
                if credentials and scheme in ("http", "https") and host
                else "URL with a host"
            )
            assert expected in str(raised.value)


@given(st.sampled_from(["s3://bucket/db", "db://team-db", "/data/lancedb", "gs://b/p"]))
def test_lancedb_takes_any_uri_without_credentials(uri: str) -> None:
    assert LanceDbConfig(url=uri).location("retrievers.lancedb") == uri
    scheme, _, rest = uri.partition("://")
    if rest:
        with pytest.raises(ValidationError, match="put credentials in api_key_env"):
            LanceDbConfig(url=f"{scheme}://key:secret@{rest}")


@given(st.text(max_size=10))
@example("TEAM_URL\n")
def test_a_variable_name_is_a_shell_name(name: str) -> None:
    shell_name = (
        name != ""
        and (name[0].isascii() and (name[0].isalpha() or name[0] == "_"))
        and all(c.isascii() and (c.isalnum() or c == "_") for c in name)
    )
    for engine in ENGINES:
        model = ENGINE_CONFIGS[engine]
        for key in ("url_env", SECRET_KEY[engine]):
            if shell_name:
                model.model_validate({key: name})
            else:
                with pytest.raises(ValidationError, match="is not an environment variable name"):
                    model.model_validate({key: name})


@pytest.mark.parametrize("engine", ENGINES)
def test_the_location_and_secret_come_from_the_environment_and_are_never_dumped(
    engine: str,
) -> None:
    where = "http://127.0.0.1:6333"
    table = ENGINE_CONFIGS[engine].model_validate(
        {"url_env": "TEAM_URL", SECRET_KEY[engine]: "TEAM_KEY"}
    )
    assert table.location("retrievers.x") is None  # not read until the edge resolves it
    resolved = with_engine_environment(
        table, environ={"TEAM_URL": f" {where}\n", "TEAM_KEY": "s3cr3t"}
    )
    assert resolved.location("retrievers.x") == where
    assert resolved.secret("retrievers.x") == "s3cr3t"
    assert "s3cr3t" not in str(resolved.model_dump()) + repr(resolved)
    assert where not in str(resolved.model_dump())
    assert table.location("retrievers.x") is None  # a copy: the table as read is unchanged

    unset = with_engine_environment(table, environ={"TEAM_KEY": " "})
    with pytest.raises(
        ConfigError, match=f"retrievers.{engine}: the environment variable TEAM_URL is not set"
    ):
        unset.location(f"retrievers.{engine}")
    with pytest.raises(ConfigError, match="TEAM_KEY is not set"):
        unset.secret(f"retrievers.{engine}")


@pytest.mark.parametrize("engine", ENGINES)
def test_the_engine_s_table_rules(engine: str, tmp_path: Path) -> None:
    model = ENGINE_CONFIGS[engine]
    with pytest.raises(ValidationError, match="set one of url or url_env, not both"):
        model.model_validate({"url": "http://127.0.0.1:1", "url_env": "TEAM_URL"})
    with pytest.raises(ValidationError, match='index = "existing" needs collection'):
        model.model_validate({"index": "existing"})
    with pytest.raises(ValidationError, match='id_key applies to index = "existing" only'):
        model.model_validate({"id_key": "doc"})
    with pytest.raises(ValidationError, match="is not a collection name"):
        model.model_validate({"collection": "9 notes"})
    # No location: embedded, in the cache folder unless local_dir says where.
    table = model()
    assert table.location("x") is None and table.secret("x") is None
    assert table.local_path(engine, tmp_path) == tmp_path / engine
    assert table.local_path(engine, None) is None
    assert model(local_dir=tmp_path / "mine").local_path(engine, tmp_path) == tmp_path / "mine"
