"""`[retrievers.hybrid] reranker = ...` resolved to a reranker: none is none, custom is the
table's factory or command, and Claude without an API key is a configuration error that
says what to set, through `retrieval-eval beir` as a user meets it."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from retrieval_eval.errors import ConfigError
from retrieval_eval.retrieval.config import CustomConfig, HybridConfig
from retrieval_eval.retrieval.rerank.build import build_reranker
from tests.retrieval.rerank.beir_project import beir, beir_dir, config_file

__all__ = ["beir_dir"]  # a fixture, used by name


def test_claude_without_a_key_is_a_configuration_error(beir_dir: Path, tmp_path: Path) -> None:
    config = config_file(tmp_path, 'reranker = "claude"\n')
    done, _, _ = beir(beir_dir, tmp_path, config, key=None)
    assert done.returncode == 2
    assert "ANTHROPIC_API_KEY" in done.stderr


def test_each_name_resolves_to_its_reranker(tmp_path: Path) -> None:
    assert build_reranker(HybridConfig(), anthropic_api_key="key") is None
    with pytest.raises(ConfigError, match='reranker = "claude" needs an API key'):
        build_reranker(HybridConfig(reranker="claude"), anthropic_api_key="")
    claude = build_reranker(
        HybridConfig(reranker="claude"), anthropic_api_key="key", cache_dir=tmp_path
    )
    assert claude is not None and claude.name == "claude"
    script = Path(__file__).parents[1] / "own_rerank_process.py"
    custom = build_reranker(
        HybridConfig(reranker="custom", custom=CustomConfig(command=[sys.executable, str(script)])),
        anthropic_api_key=None,
    )
    assert custom is not None
    assert custom.describe()["command"] == [sys.executable, str(script)]
