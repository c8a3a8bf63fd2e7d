"""docs/retrievers.md documents every key of the service retrievers' tables."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import BaseModel

from retrieval_eval.retrieval.external.services_config import (
    ChromaConfig,
    HttpConfig,
    PostgresConfig,
    RunFileConfig,
)
from retrieval_eval.retrieval.registry import RETRIEVER_NAMES


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
