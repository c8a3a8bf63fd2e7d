"""Checks on the files around the image that need no Docker engine (they run in `make test`).

They keep the release pieces in agreement: the base image tag and the package version,
the workflow files and the README's copies of them, and a lock file that names no
registry host.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest

from tests.action.git_repo import commit_all, git, init_repo

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
    # The only addresses left are packages' funding pages (metadata npm copies from them).
    funding = [entry.pop("funding", None) for entry in lock["packages"].values()]
    assert "://" not in json.dumps(lock)
    assert all(item is None or "://" in json.dumps(item) for item in funding)
    lock = json.loads(lock_text)
    package = json.loads((REPO_ROOT / "package.json").read_text(encoding="utf-8"))
    for name, version in package["devDependencies"].items():
        entry = lock["packages"][f"node_modules/{name}"]
        assert entry["version"] == version
        assert entry["integrity"].startswith("sha512-")


def test_the_release_workflow_runs_the_release_script_on_version_tags() -> None:
    text = (REPO_ROOT / ".github" / "workflows" / "release.yml").read_text(encoding="utf-8")
    assert "    tags: ['v*.*.*']\n" in text
    assert 'run: scripts/release.sh "$GITHUB_REF_NAME"' in text
    assert "RELEASE_OWNER: ${{ github.repository_owner }}" in text
    # main keeps building the Dockerfile (`uses: ./`); only release commits name an image
    action = (REPO_ROOT / "action.yml").read_text(encoding="utf-8")
    assert "\n  image: Dockerfile\n" in action


@pytest.mark.parametrize(
    ("tag", "message"),
    [
        ("v9.9.9", "v9.9.9 does not match pyproject.toml's version"),
        ("1.0", "usage: release.sh vX.Y.Z (got '1.0')"),
    ],
)
def test_the_release_script_refuses_a_tag_that_is_not_the_version(
    tag: str, message: str, tmp_path: Path
) -> None:
    """The checks run before anything is built or pushed, so no Docker engine is needed."""
    checkout = tmp_path / "maintainer"
    init_repo(checkout)
    for name in ("action.yml", "Dockerfile", "pyproject.toml", "scripts/release.sh"):
        (checkout / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO_ROOT / name, checkout / name)
    commit_all(checkout, "retrieval-eval")
    git(checkout, "tag", "-a", tag, "-m", tag)
    git(checkout, "checkout", "-q", tag)

    completed = subprocess.run(
        ["bash", "scripts/release.sh", tag],
        cwd=checkout,
        env={"PATH": os.environ["PATH"], "RELEASE_OWNER": "org", "RELEASE_REGISTRY": "127.0.0.1:9"},
        capture_output=True,
        text=True,
        check=False,
    )

    assert completed.returncode == 1
    assert message in completed.stderr
    assert git(checkout, "tag", "--list", "v1") == ""
