from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.security.harness import repo  # a pull request on a real git repository
from tests.support.fake_github import FakeGitHub
from tests.support.runner_env import TOKEN


@pytest.fixture
def github() -> Iterator[FakeGitHub]:
    with FakeGitHub(token=TOKEN, repository="octo/notes") as api:
        yield api


__all__ = ["github", "repo"]
