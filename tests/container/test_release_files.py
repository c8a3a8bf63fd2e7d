"""Checks on the files around the image that need no Docker engine (they run in `make test`).

They keep the release pieces in agreement: the base image tag and the package version,
the workflow files and the README's copies of them, and a lock file that names no
registry host.
"""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
FORK_SAFE_PAIR = (
    ".github/workflows/retrieval-eval.yml",
    ".github/workflows/retrieval-eval-publish.yml",
)
DOCS_WITH_THE_PAIR = ("README.md", "docs/action.md")


def package_version() -> str:
    project = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    return str(project["project"]["version"])


def documented_workflow(markdown: str, path: str) -> str | None:
    """The yaml block right after the line that names ``path`` (`` `path` (what it does): ``)."""
    pattern = rf"^`{re.escape(path)}`[^\n]*\n\n```ya?ml\n(.*?)^```$"
    match = re.search(pattern, markdown, re.S | re.M)
    return match.group(1) if match else None


def test_the_dockerfile_builds_on_the_base_published_for_this_version() -> None:
    dockerfile = (REPO_ROOT / "Dockerfile").read_text(encoding="utf-8")
    [default] = re.findall(r"^ARG BASE=(\S+)$", dockerfile, re.M)
    assert default == f"ghcr.io/org/retrieval-eval-base:{package_version()}"
    assert re.search(r"^FROM \$\{BASE\}$", dockerfile, re.M)
    assert 'ENTRYPOINT ["retrieval-eval", "action"]' in dockerfile


def test_the_image_tells_the_action_where_the_baked_in_model_is() -> None:
    base = (REPO_ROOT / "docker" / "base.Dockerfile").read_text(encoding="utf-8")
    assert "RETRIEVAL_EVAL_MODEL_DIR=/opt/retrieval-eval/model" in base
    assert 'model install --dir "${RETRIEVAL_EVAL_MODEL_DIR}"' in base


@pytest.mark.parametrize("workflow", FORK_SAFE_PAIR)
@pytest.mark.parametrize("doc", DOCS_WITH_THE_PAIR)
def test_the_fork_safe_workflows_are_exactly_what_the_docs_show(workflow: str, doc: str) -> None:
    shown = documented_workflow((REPO_ROOT / doc).read_text(encoding="utf-8"), workflow)
    assert shown is not None, f"{doc} does not show {workflow} (a `{workflow}` line, then yaml)"
    assert shown == (REPO_ROOT / workflow).read_text(encoding="utf-8")


def test_the_dogfooding_workflow_evaluates_this_repository_with_its_own_source() -> None:
    text = (REPO_ROOT / ".github" / "workflows" / "dogfood.yml").read_text(encoding="utf-8")
    assert "      - uses: ./\n" in text
    assert "src/retrieval_eval/retrieval/**\n" in text
    assert "datasets/**\n" in text


def test_the_npm_lock_names_no_registry_host() -> None:
    lock_text = (REPO_ROOT / "package-lock.json").read_text(encoding="utf-8")
    lock = json.loads(lock_text)
    assert '"resolved"' not in lock_text
    assert "://" not in lock_text
    package = json.loads((REPO_ROOT / "package.json").read_text(encoding="utf-8"))
    for name, version in package["devDependencies"].items():
        entry = lock["packages"][f"node_modules/{name}"]
        assert entry["version"] == version
        assert entry["integrity"].startswith("sha512-")
