"""`retrieval-eval cache merge` through the console script: --model auto takes the model
the caches hold (a named one refuses another's vectors), --model-dir names the folder
checked, what was merged is said, and the required flags are usage errors naming them."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from retrieval_eval.index.embedding_cache import EMBEDDINGS_SUBDIR, EmbeddingCache
from retrieval_eval.index.model_catalog import DEFAULT_MODEL, INT8_MODEL
from retrieval_eval.index.model_install import BUILT_SHA256
from tests.author.cli import retrieval_eval


def _cache(folder: Path, model: str, texts: tuple[str, ...] = ("a text", "b text")) -> None:
    """A --cache-dir holding one vector per text, recorded as made by ``model``."""
    with EmbeddingCache(folder / EMBEDDINGS_SUBDIR) as cache:
        vectors = {text: np.full(384, i + 1, dtype=np.float32) for i, text in enumerate(texts)}
        cache.put_many(BUILT_SHA256[model], vectors)


def _held(folder: Path) -> int:
    with EmbeddingCache(folder / EMBEDDINGS_SUBDIR) as cache:
        return len(cache)


@pytest.mark.parametrize("model", [DEFAULT_MODEL, INT8_MODEL])
def test_auto_takes_the_model_the_caches_hold(tmp_path: Path, model: str) -> None:
    _cache(tmp_path / "s1", model, ("a text", "b text"))
    _cache(tmp_path / "s2", model, ("b text", "c text"))

    merged = retrieval_eval("cache", "merge", "--into", "all", "s1", "s2", cwd=tmp_path)

    assert merged.returncode == 0, merged.stderr
    assert merged.stderr.strip() == "merged 2 cache(s) into all: 3 new vectors, 3 in all"
    assert _held(tmp_path / "all") == 3


def test_a_named_model_refuses_another_models_cache(tmp_path: Path) -> None:
    _cache(tmp_path / "s1", INT8_MODEL)

    refused = retrieval_eval(
        "cache", "merge", "--model", DEFAULT_MODEL, "--into", "all", "s1", cwd=tmp_path
    )

    assert refused.returncode == 2
    assert f"holds vectors of another model (sha256 {BUILT_SHA256[INT8_MODEL]})" in refused.stderr
    assert not (tmp_path / "all").exists()


def test_model_dir_names_the_folder_checked(tmp_path: Path) -> None:
    _cache(tmp_path / "s1", DEFAULT_MODEL)
    (tmp_path / "empty").mkdir()

    done = retrieval_eval(
        "cache", "merge", "--model-dir", "empty", "--into", "all", "s1", cwd=tmp_path
    )

    assert done.returncode == 2
    assert "empty: the embedding model is not installed here" in done.stderr
    assert not (tmp_path / "all").exists()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("s1",), "Missing option '--into'"),
        (("--into", "all"), "Missing argument 'SHARD_DIRS...'"),
        (("--into", "all", "nowhere"), "Directory 'nowhere' does not exist"),
        (("--into", "all", "--model", "bge", "s1"), "Invalid value for '--model'"),
    ],
    ids=["no-into", "no-cache", "absent-cache", "unknown-model"],
)
def test_usage_errors_name_the_flag(tmp_path: Path, args: tuple[str, ...], message: str) -> None:
    _cache(tmp_path / "s1", DEFAULT_MODEL)

    done = retrieval_eval("cache", "merge", *args, cwd=tmp_path)

    assert done.returncode == 2
    assert message in done.stderr
    assert not (tmp_path / "all").exists()
