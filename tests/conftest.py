"""Fixtures shared by every test package."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
SHARED = REPO_ROOT.parent / "shared"


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return REPO_ROOT


@pytest.fixture(scope="session")
def cranfield_beir() -> Path:
    """The real Cranfield collection in BEIR layout (../shared, on every machine and in CI)."""
    path = SHARED / "datasets" / "cranfield" / "beir"
    assert path.is_dir(), (
        f"{path} is missing: the shared datasets come with every checkout's ../shared"
    )
    return path


@pytest.fixture(scope="session")
def cranfield_raw() -> Path:
    path = SHARED / "datasets" / "cranfield" / "raw"
    assert path.is_dir(), f"{path} is missing"
    return path


@pytest.fixture(scope="session")
def model_dir() -> Path:
    """The installed all-MiniLM-L6-v2 folder (chromadb's default location), verified once."""
    from retrieval_eval.errors import InputError
    from retrieval_eval.index.model_install import default_model_dir, verify_model

    path = default_model_dir(Path.home())
    try:
        verify_model(path)
    except InputError as error:
        pytest.fail(
            f"the embedding model is missing or altered ({error}); "
            "run `make test` or `retrieval-eval model install`",
            pytrace=False,
        )
    return path
