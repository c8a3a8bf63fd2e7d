"""Fixtures for the container tests.

The modules in ``NEEDS_DOCKER`` need a running Docker engine, the locally built images
and the CI tools (scripts/ci-container.sh provides all three), so they are collected only
when the run selects the ``container`` marker (``pytest -m container``); a plain
``pytest`` leaves them out instead of failing on a machine without an engine.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.fake_github import FakeGitHub
from tests.support.runner_env import TOKEN

NEEDS_DOCKER = {
    "test_runner_container.py",
    "test_boundary.py",
    "test_act_workflow.py",
    "test_act_sharded.py",
    "test_lint.py",
    "test_release.py",
    "test_image.py",
    "test_init_lint.py",
}
REPO_ROOT = Path(__file__).resolve().parents[2]


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    if collection_path.name in NEEDS_DOCKER and "container" not in (config.option.markexpr or ""):
        return True
    return None


def _require_engine() -> None:
    if shutil.which("docker") is None:
        pytest.fail("no docker client on PATH; run scripts/ci-container.sh")
    info = subprocess.run(["docker", "info"], capture_output=True, text=True, check=False)
    if info.returncode != 0:
        reason = info.stderr.strip()
        pytest.fail(f"no Docker engine answers ({reason}); run scripts/ci-container.sh")


@pytest.fixture(scope="session")
def action_image() -> str:
    """The Action's image: the one ci-container.sh built, else built here from the base."""
    _require_engine()
    tag = os.environ.get("RETRIEVAL_EVAL_IMAGE")
    if tag:
        return tag
    tag = "retrieval-eval:container-tests"
    subprocess.run(
        ["docker", "build", "--quiet", "--network=none", "-t", tag, str(REPO_ROOT)],
        env={**os.environ, "DOCKER_BUILDKIT": "0"},
        check=True,
        capture_output=True,
    )
    return tag


@pytest.fixture(scope="session")
def runner_image() -> str:
    """The image act runs the job in: the debootstrapped Debian ci-container.sh imported."""
    _require_engine()
    return os.environ.get("RETRIEVAL_EVAL_RUNNER_IMAGE", "retrieval-eval-ci/debian-python:bookworm")


@pytest.fixture(scope="session")
def python_image() -> str:
    """The Python image the base was built from, named by digest as a release requires:
    ci-container.sh pushes the debootstrapped Debian to the local registry for that."""
    _require_engine()
    pinned = os.environ.get("RETRIEVAL_EVAL_PYTHON_IMAGE")
    if not pinned:
        pytest.fail("RETRIEVAL_EVAL_PYTHON_IMAGE is not set; run scripts/ci-container.sh")
    return pinned


@pytest.fixture(scope="session")
def act_runner_image() -> str:
    """The job image for workflows with JavaScript actions: that Debian plus Node.js."""
    _require_engine()
    return os.environ.get(
        "RETRIEVAL_EVAL_ACT_RUNNER_IMAGE", "retrieval-eval-ci/act-runner:bookworm"
    )


@pytest.fixture
def github() -> Iterator[FakeGitHub]:
    with FakeGitHub(token=TOKEN, repository="octo/notes") as api:
        yield api
