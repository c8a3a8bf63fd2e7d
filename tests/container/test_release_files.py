"""Checks on the files around the image that need no Docker engine (they run in `make test`).

They keep the release pieces in agreement: the base image tag and the package version,
the workflow files and the README's copies of them, and a lock file that names no
registry host.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest
import yaml

from tests.action.git_repo import commit_all, git, init_repo
from tests.support.action import CONSOLE_SCRIPT

REPO_ROOT = Path(__file__).resolve().parents[2]
# What the base image is built from; its tag is a hash of them (scripts/release.sh).
BASE_INPUTS = (
    "requirements/runtime.lock",
    "requirements/model.lock",
    "docker/unused.txt",
    "docker/trim-venv.sh",
    "docker/base.Dockerfile",
)
# What release.sh reads before it asks the registry anything.
RELEASE_CHECK_FILES = (
    "action.yml",
    "Dockerfile",
    "pyproject.toml",
    "scripts/release.sh",
    *BASE_INPUTS,
)
# The source and configuration files a version string could hide in.
VERSIONED_FILES = (
    "src",
    "scripts",
    "docker",
    ".github",
    "Dockerfile",
    "action.yml",
    "pyproject.toml",
)
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


def base_tag() -> str:
    inputs = b"".join((REPO_ROOT / name).read_bytes() for name in BASE_INPUTS)
    return "deps-" + hashlib.sha256(inputs).hexdigest()[:12]


def test_the_dockerfile_builds_on_the_base_of_its_dependency_files() -> None:
    dockerfile = (REPO_ROOT / "Dockerfile").read_text(encoding="utf-8")
    [default] = re.findall(r"^ARG BASE=(\S+)$", dockerfile, re.M)
    expected = f"ghcr.io/org/retrieval-eval-base:{base_tag()}"
    assert default == expected, f"a dependency file changed: write `ARG BASE={expected}`"
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


def test_the_dogfooding_workflow_builds_the_base_a_dependency_bump_names() -> None:
    """Until a release publishes it, the base a bump names exists nowhere: the self-check
    builds it from the pull request's files before the runner builds `uses: ./` on it."""
    workflow = yaml.safe_load(
        (REPO_ROOT / ".github" / "workflows" / "dogfood.yml").read_text(encoding="utf-8")
    )
    steps = workflow["jobs"]["evaluate"]["steps"]
    action = next(i for i, step in enumerate(steps) if step.get("uses") == "./")
    [build] = [step["run"] for step in steps[:action] if "run" in step]
    assert "base=$(sed -n 's/^ARG BASE=//p' Dockerfile)" in build
    assert 'docker manifest inspect "$base"' in build
    assert 'docker build -f docker/base.Dockerfile -t "$base" .' in build


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
    # The owner comes from the repository the release runs in (GITHUB_REPOSITORY).
    assert "RELEASE_OWNER" not in text
    # After the script has moved the tags: the GitHub Release a Marketplace listing needs.
    assert text.index('gh release create "$GITHUB_REF_NAME" --verify-tag') > text.index(
        "scripts/release.sh"
    )
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
    checkout = release_checkout(tmp_path / "maintainer", tag)

    completed = release(checkout, tag)

    assert completed.returncode == 1
    assert message in completed.stderr
    assert git(checkout, "tag", "--list", "v1") == ""


def release_checkout(
    path: Path,
    tag: str | None,
    files: tuple[str, ...] = RELEASE_CHECK_FILES,
    edit: tuple[str, str, str] | None = None,
) -> Path:
    """A maintainer's clone with the files release.sh checks (one ``edit`` made), at ``tag``."""
    init_repo(path)
    for name in files:
        (path / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO_ROOT / name, path / name)
    if edit is not None:
        name, old, new = edit
        (path / name).write_text((path / name).read_text(encoding="utf-8").replace(old, new))
    commit_all(path, "retrieval-eval")
    if tag is not None:
        git(path, "tag", "-a", tag, "-m", tag)
        git(path, "checkout", "-q", tag)
    return path


# A Python base named by digest, as a release requires (this one is never pulled: the
# registry at 127.0.0.1:9 does not answer).
PINNED_PYTHON = "127.0.0.1:9/python:3.11-slim-bookworm@sha256:" + "0123456789abcdef" * 4


def release(
    checkout: Path,
    tag: str,
    repository: str = "Org/retrieval-eval",
    python_image: str | None = PINNED_PYTHON,
) -> subprocess.CompletedProcess[str]:
    """release.sh with a registry that cannot answer and no engine: nothing can be built.
    ``python_image`` None leaves docker/base.Dockerfile's default."""
    pinned = {} if python_image is None else {"PYTHON_IMAGE": python_image}
    return subprocess.run(
        ["bash", "scripts/release.sh", tag],
        cwd=checkout,
        env={
            "PATH": os.environ["PATH"],
            "GITHUB_REPOSITORY": repository,
            "RELEASE_REGISTRY": "127.0.0.1:9",
            "DOCKER_HOST": "unix:///nonexistent/docker.sock",
            "DOCKER_CONFIG": str(checkout.parent / "docker-config"),
            **pinned,
        },
        capture_output=True,
        text=True,
        check=False,
    )


def test_the_version_is_written_once_in_the_source_and_configuration() -> None:
    listed = git(REPO_ROOT, "ls-files", "-z", "--", *VERSIONED_FILES).split("\0")
    pattern = re.compile(rf"(?<![\w.]){re.escape(package_version())}(?![\w.])")
    found = [
        f"{name}:{number}"
        for name in listed
        if name and not name.endswith((".lock", "-lock.json"))
        for number, line in enumerate(
            (REPO_ROOT / name).read_text(encoding="utf-8", errors="replace").splitlines(), 1
        )
        if pattern.search(line)
    ]
    assert found == ["pyproject.toml:7"]


def test_the_console_script_reports_pyprojects_version() -> None:
    completed = subprocess.run(
        [CONSOLE_SCRIPT, "--version"], capture_output=True, text=True, check=True
    )
    assert completed.stdout.strip() == f"retrieval-eval, version {package_version()}"


def test_a_release_bump_edits_one_line_and_passes_the_release_checks(tmp_path: Path) -> None:
    """The documented bump, then release.sh: every check before the registry passes."""
    checkout = release_checkout(tmp_path / "maintainer", None)
    major, minor, patch = package_version().split(".")
    bumped = f"{major}.{minor}.{int(patch) + 1}"
    pyproject = checkout / "pyproject.toml"
    text = pyproject.read_text(encoding="utf-8")
    pyproject.write_text(
        text.replace(f'\nversion = "{package_version()}"\n', f'\nversion = "{bumped}"\n')
    )
    assert git(checkout, "diff", "--numstat") == "1\t1\tpyproject.toml"
    commit_all(checkout, f"retrieval-eval {bumped}")
    git(checkout, "tag", "-a", f"v{bumped}", "-m", bumped)
    git(checkout, "checkout", "-q", f"v{bumped}")

    completed = release(checkout, f"v{bumped}")

    assert completed.returncode == 1
    # The first step that needs the outside world: asking the registry.
    assert "release: could not ask 127.0.0.1:9 whether" in completed.stderr, completed.stderr


@pytest.mark.parametrize(
    "python_image",
    [None, "python:3.11-slim-bookworm", "python@sha256:abc", PINNED_PYTHON + "0"],
)
def test_the_release_script_refuses_a_python_base_not_named_by_digest(
    python_image: str | None, tmp_path: Path
) -> None:
    """A tag moves with every Debian and CPython patch release; a release pins the digest."""
    tag = f"v{package_version()}"
    checkout = release_checkout(tmp_path / "maintainer", tag)
    default = re.findall(
        r"^ARG PYTHON_IMAGE=(\S+)$",
        (REPO_ROOT / "docker" / "base.Dockerfile").read_text(encoding="utf-8"),
        re.M,
    )
    assert default, "docker/base.Dockerfile lost its ARG PYTHON_IMAGE"
    if python_image is None and "@sha256:" in default[0]:
        pytest.skip("the Dockerfile's default is pinned (the case the other tests release)")

    completed = release(checkout, tag, python_image=python_image)

    assert completed.returncode == 1
    shown = python_image or default[0]
    assert f"the Python base '{shown}' is not pinned by digest" in completed.stderr
    assert "could not ask" not in completed.stderr  # refused before the registry


WORKFLOW = ".github/workflows/retrieval-eval.yml"


def _line_of(text: str, path: str = "src/retrieval_eval/author/scaffold.py") -> int:
    """The first line of ``path`` that starts with ``text`` (it moves as the file grows)."""
    lines = (REPO_ROOT / path).read_text().splitlines()
    return next(number for number, line in enumerate(lines, 1) if line.strip().startswith(text))


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (
            None,
            "Dockerfile: ARG BASE names the owner org, "
            "but this release runs in acme/retrieval-eval",
        ),
        (
            ("Dockerfile", "/org/retrieval-eval-base:", "/acme/retrieval-eval-base:"),
            f".github/workflows/retrieval-eval.yml:{_line_of('- uses: org/', WORKFLOW)}: "
            "names the owner org, "
            "but this release runs in acme/retrieval-eval",
        ),
        (
            ("Dockerfile", "/org/retrieval-eval-base:", "/acme/retrieval-eval-base:"),
            f"src/retrieval_eval/author/scaffold.py:{_line_of('ACTION = ')}: names the owner org, "
            "but this release runs in acme/retrieval-eval",
        ),
    ],
)
def test_the_release_script_refuses_an_owner_that_is_not_the_repositorys(
    edit: tuple[str, str, str] | None, message: str, tmp_path: Path
) -> None:
    # The workflow's check comes first, so the scaffold's line is reached without it.
    workflow = ".github/workflows/retrieval-eval.yml"
    scaffold = "src/retrieval_eval/author/scaffold.py"
    files = (*RELEASE_CHECK_FILES, workflow if workflow in message else scaffold)
    tag = f"v{package_version()}"
    checkout = release_checkout(tmp_path / "maintainer", tag, files, edit)

    completed = release(checkout, tag, repository="acme/retrieval-eval")

    assert completed.returncode == 1
    assert f"release: {message}" in completed.stderr, completed.stderr


def test_the_marketplace_listing_has_a_short_description_and_a_license() -> None:
    """The Marketplace listing takes a description of fewer than 125 characters, and the
    license pyproject.toml declares is in the repository."""
    action = yaml.safe_load((REPO_ROOT / "action.yml").read_text(encoding="utf-8"))
    assert len(action["description"]) < 125
    project = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert project["project"]["license"] == "MIT"
    license_text = (REPO_ROOT / "LICENSE").read_text(encoding="utf-8")
    assert license_text.startswith("MIT License\n\nCopyright (c) retrieval-eval contributors\n")
    assert 'THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND' in license_text


def test_the_documented_sharded_workflow_sets_a_status_when_a_shard_fails() -> None:
    """A failed shard must not cancel the others or skip the merge (which sets the status);
    a skipped merge leaves a required check pending forever."""
    markdown = (REPO_ROOT / "docs" / "action.md").read_text(encoding="utf-8")
    found = re.search(r"with four shards:\n\n```yaml\n(.*?)^```$", markdown, re.S | re.M)
    assert found, "docs/action.md lost the sharded workflow"
    jobs = yaml.safe_load(found.group(1))["jobs"]
    assert jobs["embed"]["strategy"]["fail-fast"] is False
    assert jobs["evaluate"]["strategy"]["fail-fast"] is False
    assert jobs["evaluate"]["if"] == "${{ !cancelled() }}"
    assert jobs["merge"]["if"] == "${{ !cancelled() }}"
    # The image has no git: the merge reads the base commit's baseline through the API.
    assert not re.search(r"\bgit\b", found.group(1).replace(".git/config", ""))
    assert all("fetch-depth" not in str(step.get("with")) for step in jobs["merge"]["steps"])
