"""The release path end to end, against a real registry (Debian's docker-registry on
127.0.0.1, started by scripts/ci-container.sh).

scripts/release.sh runs on a tagged clone of this repository and pushes the base and the
Action's image to the local registry, commits the released action.yml and moves the tags
in the clone's origin (a bare repository). Then a consumer's workflow, run by act, says
`uses: org/retrieval-eval@v1`: act's local-repository mapping resolves it to a fresh
clone of origin at `v1`, act pulls the published image from the registry (nothing is
built) and the Action reaches its verdict against the fake GitHub API.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import time
import tomllib
import urllib.request
from pathlib import Path

import pytest

from tests.action.git_repo import commit_all, git, init_repo, write
from tests.action.payloads import pull_request_event
from tests.action.project import project_files
from tests.container.runner import record_timing, run_act, serve_base_commit_files
from tests.support.fake_github import FakeGitHub
from tests.support.runner_env import TOKEN

pytestmark = [pytest.mark.container, pytest.mark.slow]

REPO_ROOT = Path(__file__).resolve().parents[2]
CONSUMER_WORKFLOW = Path(__file__).parent / "workflows" / "act-release-consumer.yml"
# What the release script and the two image builds read from a checkout.
RELEASE_FILES = (
    "action.yml",
    "Dockerfile",
    ".dockerignore",
    "pyproject.toml",
    "README.md",
    "requirements/runtime.lock",
    "requirements/model.lock",
    "docker/base.Dockerfile",
    "docker/unused.txt",
    "docker/trim-venv.sh",
    "scripts/release.sh",
    ".github/workflows/retrieval-eval.yml",
    ".github/workflows/retrieval-eval-publish.yml",
)
MARKER = "<!-- retrieval-eval:retrieval-eval -->"


def version() -> str:
    project = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    return str(project["project"]["version"])


def major_tag() -> str:
    """The moving tag a release moves: v1 for 1.x.y (v0 while the version is 0.x)."""
    return "v" + version().split(".")[0]


@pytest.fixture(scope="module")
def registry() -> str:
    address = os.environ.get("RETRIEVAL_EVAL_REGISTRY")
    if not address:
        pytest.fail("RETRIEVAL_EVAL_REGISTRY is not set; run scripts/ci-container.sh")
    return address


def registry_tags(registry: str, name: str) -> list[str]:
    with urllib.request.urlopen(f"http://{registry}/v2/{name}/tags/list", timeout=10) as answer:
        return list(json.load(answer)["tags"] or [])


def maintainer_checkout(path: Path, origin: Path) -> str:
    """This repository's release files on main, pushed to a bare origin, tagged vX.Y.Z."""
    init_repo(path)
    for name in RELEASE_FILES:
        (path / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO_ROOT / name, path / name)
    shutil.copytree(REPO_ROOT / "src", path / "src", ignore=shutil.ignore_patterns("__pycache__"))
    source = commit_all(path, "retrieval-eval")
    git(path, "tag", "-a", f"v{version()}", "-m", f"retrieval-eval {version()}")
    subprocess.run(["git", "init", "-q", "--bare", str(origin)], check=True)
    git(path, "remote", "add", "origin", str(origin))
    git(path, "push", "-q", "origin", "main", "--tags")
    return source


def run_release(
    checkout: Path,
    registry: str,
    python_image: str,
    tag: str,
    *,
    succeeds: bool = True,
    repository: str = "Org/retrieval-eval",
) -> str:
    env = {
        **os.environ,
        "RELEASE_REGISTRY": registry,
        # The owner is lower-cased by the script, as ghcr.io requires.
        "GITHUB_REPOSITORY": repository,
        "PYTHON_IMAGE": python_image,
        "DOCKER_BUILDKIT": "0",
    }
    completed = subprocess.run(
        ["bash", "scripts/release.sh", tag],
        cwd=checkout,
        env=env,
        capture_output=True,
        text=True,
        timeout=1800,
        check=False,
    )
    log = completed.stdout + completed.stderr
    assert completed.returncode == (0 if succeeds else 1), log
    return log


def base_tag(checkout: Path) -> str:
    """The base tag the Dockerfile names (a hash of the dependency files)."""
    dockerfile = (checkout / "Dockerfile").read_text(encoding="utf-8")
    [base] = re.findall(r"^ARG BASE=\S+:(\S+)$", dockerfile, re.M)
    return base


def manifest_digest(registry: str, name: str, tag: str) -> str:
    request = urllib.request.Request(
        f"http://{registry}/v2/{name}/manifests/{tag}",
        method="HEAD",
        headers={"Accept": "application/vnd.docker.distribution.manifest.v2+json"},
    )
    with urllib.request.urlopen(request, timeout=10) as answer:
        return str(answer.headers["Docker-Content-Digest"])


def test_release_publishes_the_image_and_v1_runs_it_pulled_from_the_registry(
    registry: str, runner_image: str, python_image: str, github: FakeGitHub, tmp_path: Path
) -> None:
    tag, major = f"v{version()}", major_tag()
    image = f"{registry}/org/retrieval-eval:{version()}"
    checkout, origin = tmp_path / "maintainer", tmp_path / "origin.git"
    source = maintainer_checkout(checkout, origin)

    log = run_release(checkout, registry, python_image, tag)

    assert f"release: {tag} and {major} -> " in log
    assert registry_tags(registry, "org/retrieval-eval") == [version()]
    assert registry_tags(registry, "org/retrieval-eval-base") == [base_tag(checkout)]
    digest = manifest_digest(registry, "org/retrieval-eval", version())
    # Both tags name the release commit: the tagged source plus the rewritten action.yml.
    release = git(origin, "rev-parse", f"{major}^{{commit}}")
    assert git(origin, "rev-parse", f"{tag}^{{commit}}") == release
    assert git(origin, "rev-parse", f"{release}^") == source
    assert git(origin, "diff", "--name-only", source, release) == "action.yml"
    released_action = git(origin, "show", f"{release}:action.yml").splitlines()
    # Tag and digest: a sha pin of the release commit pulls exactly the pushed image.
    assert f"  image: docker://{image}@{digest}" in released_action
    assert "  image: Dockerfile" in git(origin, "show", "main:action.yml").splitlines()
    # The Python image the base was built from, by digest: in the release commit's message
    # and in the image's labels.
    assert f"Python base: {python_image}" in git(origin, "log", "-1", "--format=%B", release)
    label = subprocess.run(
        ["docker", "image", "inspect", "--format",
         '{{index .Config.Labels "org.opencontainers.image.base.name"}}', image],
        capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    assert label == python_image

    # How long `image: Dockerfile` makes every job wait before the Action starts: the
    # build of the Action's layer on the (already pulled) base, which the prebuilt image
    # saves. Recorded for docs/container.md, not asserted.
    started = time.monotonic()
    subprocess.run(
        ["docker", "build", "--quiet", "--no-cache", "--network=none",
         "--build-arg", f"BASE={registry}/org/retrieval-eval-base:{base_tag(checkout)}",
         "-t", "retrieval-eval:timed-build", "."],
        cwd=checkout, check=True, capture_output=True, env={**os.environ, "DOCKER_BUILDKIT": "0"},
    )  # fmt: skip
    built_in = time.monotonic() - started
    record_timing("release: build of the Action layer that a prebuilt image saves", built_in)
    subprocess.run(["docker", "rmi", "retrieval-eval:timed-build"], check=True, capture_output=True)

    # The consumer: a notes project whose workflow says `uses: org/retrieval-eval@v1`.
    released = tmp_path / f"retrieval-eval@{major}"
    git(tmp_path, "clone", "-q", "--branch", major, str(origin), str(released))
    workspace = tmp_path / "consumer"
    init_repo(workspace)
    write(workspace, project_files())
    (workspace / ".github" / "workflows").mkdir(parents=True)
    # The workflow says `@v1`, as users write it; while the version is 0.x the tag is v0.
    consumer = CONSUMER_WORKFLOW.read_text(encoding="utf-8").replace("@v1\n", f"@{major}\n")
    (workspace / ".github" / "workflows" / CONSUMER_WORKFLOW.name).write_text(consumer)
    git(workspace, "remote", "add", "origin", "https://github.com/octo/notes.git")
    base = commit_all(workspace, "notes and their golden datasets")
    git(workspace, "checkout", "-q", "-b", "feature")
    write(workspace, {"datasets/corpus/travel/porto.md": "# Porto\n\nPort wine cellars.\n"})
    head = commit_all(workspace, "a note on Porto")
    github.add_pull(7, head_sha=head, base_sha=base, files=["datasets/corpus/travel/porto.md"])
    serve_base_commit_files(github, workspace, base)
    event = tmp_path / "event.json"
    event.write_text(json.dumps(pull_request_event(number=7, head_sha=head, base_sha=base)))
    # Only the registry can bring the image back: act pulls a missing image, never builds it.
    subprocess.run(["docker", "rmi", image], check=True, capture_output=True)
    manifests_before = manifest_pulls(registry)

    completed, job_took = run_act(
        CONSUMER_WORKFLOW.name,
        event=event,
        runner_image=runner_image,
        workspace=workspace,
        home=tmp_path / "act-home",
        api_url=github.base_url,
        run_id="4343",
        options=["--local-repository", f"org/retrieval-eval@{major}={released}"],
        timeout=600,
    )
    record_timing(f"release: act job with `uses: org/retrieval-eval@{major}` (pulled)", job_took)
    act_log = completed.stdout + completed.stderr

    assert completed.returncode == 0, act_log
    assert "Job succeeded" in act_log
    assert "verdict: baseline-established" in act_log
    # An `::add-mask::` line (if act echoes it) is how the runner is told to hide the token.
    shown = "\n".join(line for line in act_log.splitlines() if "::add-mask::" not in line)
    assert TOKEN not in shown
    assert manifest_pulls(registry) > manifests_before, "the image did not come from the registry"
    digests = subprocess.run(
        ["docker", "image", "inspect", "--format", "{{json .RepoDigests}}",
         f"{registry}/org/retrieval-eval@{digest}"],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    assert f"{registry}/org/retrieval-eval@{digest}" in digests
    [comment] = github.comments_on(7)
    assert comment["body"].startswith(MARKER + "\n")
    [status] = github.statuses_for(head)
    assert (status["state"], status["context"]) == ("success", "retrieval-eval")

    # The same tag again, from a fresh checkout of the same source: refused before anything
    # is built, and the registry's image is untouched.
    again = tmp_path / "maintainer-again"
    maintainer_checkout(again, tmp_path / "origin-again.git")
    log = run_release(again, registry, python_image, tag, succeeds=False)
    assert f"release: {image} is already in the registry" in log
    assert "release: building" not in log
    assert manifest_digest(registry, "org/retrieval-eval", version()) == digest
    # The same source released from a repository of another owner (a fork): refused before
    # anything is built or pushed, since the Dockerfile and the workflows name `org`.
    log = run_release(
        again, registry, python_image, tag, succeeds=False, repository="acme/retrieval-eval"
    )
    assert "names the owner org, but this release runs in acme/retrieval-eval" in log, log
    assert "release: building" not in log
    assert not [name for name in registry_catalog(registry) if name.startswith("acme/")]

    # The next release, with the documented steps only: bump pyproject.toml's version (one
    # line), commit, tag. The base is reused from the registry, not rebuilt.
    major_, minor, patch = version().split(".")
    bumped = f"{major_}.{minor}.{int(patch) + 1}"
    git(checkout, "checkout", "-q", "main")
    pyproject = checkout / "pyproject.toml"
    pyproject.write_text(
        pyproject.read_text(encoding="utf-8").replace(
            f'\nversion = "{version()}"\n', f'\nversion = "{bumped}"\n'
        )
    )
    assert git(checkout, "diff", "--numstat") == "1\t1\tpyproject.toml"
    commit_all(checkout, f"retrieval-eval {bumped}")
    git(checkout, "tag", "-a", f"v{bumped}", "-m", f"retrieval-eval {bumped}")
    git(checkout, "push", "-q", "origin", "main", f"v{bumped}")
    git(checkout, "checkout", "-q", f"v{bumped}")

    log = run_release(checkout, registry, python_image, f"v{bumped}")

    assert f"release: reusing {registry}/org/retrieval-eval-base:{base_tag(checkout)}" in log
    assert sorted(registry_tags(registry, "org/retrieval-eval")) == sorted([version(), bumped])
    assert registry_tags(registry, "org/retrieval-eval-base") == [base_tag(checkout)]
    assert manifest_digest(registry, "org/retrieval-eval", version()) == digest
    second = git(origin, "rev-parse", f"{major}^{{commit}}")
    assert git(origin, "rev-parse", f"v{bumped}^{{commit}}") == second != release
    bumped_digest = manifest_digest(registry, "org/retrieval-eval", bumped)
    image_line = f"  image: docker://{registry}/org/retrieval-eval:{bumped}@{bumped_digest}"
    assert image_line in git(origin, "show", f"{second}:action.yml").splitlines()

    # A workflow pinned to the first release commit's sha, after `v1` has moved on, still
    # runs the first image: act pulls it from the registry by its digest.
    pinned = tmp_path / "retrieval-eval@sha"
    git(tmp_path, "clone", "-q", str(origin), str(pinned))
    git(pinned, "checkout", "-q", release)
    (workspace / ".github" / "workflows" / CONSUMER_WORKFLOW.name).write_text(
        consumer.replace(f"@{major}\n", f"@{release}\n")
    )
    first_image = f"{registry}/org/retrieval-eval@{digest}"
    image_id = subprocess.run(
        ["docker", "image", "inspect", "--format", "{{.Id}}", first_image],
        capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    subprocess.run(["docker", "rmi", "--force", image_id], check=True, capture_output=True)
    log_before = registry_log()
    completed, _ = run_act(
        CONSUMER_WORKFLOW.name,
        event=event,
        runner_image=runner_image,
        workspace=workspace,
        home=tmp_path / "act-home",
        api_url=github.base_url,
        run_id="4345",
        options=["--local-repository", f"org/retrieval-eval@{release}={pinned}"],
        timeout=600,
    )
    act_log = completed.stdout + completed.stderr
    assert completed.returncode == 0, act_log
    assert "verdict: baseline-established" in act_log
    pulled = registry_log()[len(log_before) :]
    assert f"GET /v2/org/retrieval-eval/manifests/{digest}" in pulled, pulled
    assert bumped_digest not in pulled


def registry_catalog(registry: str) -> list[str]:
    with urllib.request.urlopen(f"http://{registry}/v2/_catalog", timeout=10) as answer:
        return list(json.load(answer)["repositories"] or [])


def registry_log() -> str:
    """What the registry has logged so far (its requests among them)."""
    log = Path(os.environ.get("RETRIEVAL_EVAL_REGISTRY_LOG", ""))
    if not log.is_file():
        pytest.fail("RETRIEVAL_EVAL_REGISTRY_LOG is not set; run scripts/ci-container.sh")
    return log.read_text(encoding="utf-8", errors="replace")


def manifest_pulls(registry: str) -> int:
    """Manifest requests the registry has logged for the Action's image so far."""
    return len(re.findall(r"GET /v2/org/retrieval-eval/manifests/", registry_log()))
