"""docs/retrievers.md documents every key of the service retrievers' tables."""

from __future__ import annotations

import string
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel, ValidationError

from retrieval_eval.retrieval.external.services_config import (
    ChromaConfig,
    HttpConfig,
    PostgresConfig,
    RunFileConfig,
)
from retrieval_eval.retrieval.registry import RETRIEVER_NAMES
from tests.support.action import run_cli


@pytest.mark.parametrize("model", [PostgresConfig, ChromaConfig, HttpConfig, RunFileConfig])
def test_every_key_is_documented(repo_root: Path, model: type[BaseModel]) -> None:
    docs = (repo_root / "docs" / "retrievers.md").read_text(encoding="utf-8")
    missing = [name for name in model.model_fields if f"`{name}`" not in docs]
    assert missing == []


def test_every_retriever_has_a_section(repo_root: Path) -> None:
    docs = (repo_root / "docs" / "retrievers.md").read_text(encoding="utf-8")
    assert [
        name
        for name in RETRIEVER_NAMES
        if f"### `{name}`" not in docs and f"## `{name}`" not in docs
    ] == []


_TCHAR = "!#$%&'*+.^_`|~" + string.digits + string.ascii_letters + "-"


@given(st.text(alphabet=st.sampled_from([*_TCHAR, "\n", "\r", " ", ":", "é", "\0"]), max_size=8))
def test_a_header_name_is_accepted_exactly_when_it_is_an_http_token(name: str) -> None:
    """An HTTP token (RFC 9110): `re.match` with `$` also took "X-Team\\n"."""
    token = bool(name) and all(c in _TCHAR for c in name)
    try:
        HttpConfig(url="http://127.0.0.1:9/search", headers_env={name: "TEAM_AUTH"})
    except ValidationError as error:
        assert not token, error
        assert "is not an HTTP header name" in str(error)
    else:
        assert token, repr(name)


@given(st.sampled_from(["english", "public.english", "simple"]), st.sampled_from(["\n", " ", ";"]))
def test_a_text_search_config_with_a_trailing_character_is_refused(name: str, tail: str) -> None:
    PostgresConfig(dsn_env="PG_DSN", text_search_config=name)
    with pytest.raises(ValidationError, match="is not a text search configuration name"):
        PostgresConfig(dsn_env="PG_DSN", text_search_config=name + tail)


def test_a_header_name_ending_in_a_newline_is_refused_by_the_command(tmp_path: Path) -> None:
    (tmp_path / "retrieval-eval.toml").write_text(
        '[retrievers.http]\nurl = "http://127.0.0.1:9/search"\n'
        'headers_env = { "X-Team\\n" = "TEAM_AUTH" }\n',
        encoding="utf-8",
    )
    done = run_cli(tmp_path, "validate", env={"TEAM_AUTH": "t0ken"})
    assert done.returncode == 2, done.log
    assert (
        "retrieval-eval.toml:3: bad value for 'retrievers.http.headers_env': "
        "'X-Team\\n' is not an HTTP header name"
    ) in done.stderr, done.stderr
