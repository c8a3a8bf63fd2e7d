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
    """The real Cranfield collection in BEIR layout (../shared, present on every machine and in CI)."""
    path = SHARED / "datasets" / "cranfield" / "beir"
    assert path.is_dir(), f"{path} is missing: the shared datasets come with every checkout's ../shared"
    return path


@pytest.fixture(scope="session")
def cranfield_raw() -> Path:
    path = SHARED / "datasets" / "cranfield" / "raw"
    assert path.is_dir(), f"{path} is missing"
    return path
