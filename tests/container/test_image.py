"""What the Action's image holds: at most 450 MB, no git, none of docker/unused.txt, no
hidden copy of the source; and two clean builds of it give the same layers.

The runner pulls the whole image before every job that uses the Action, so its size is
start time. The other container tests run the whole Action in this same image, which is
what shows that nothing removed here was needed.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from tests.action.project import CONFIG, SEMANTIC_FIXTURES, fixture_lines, project_files
from tests.support.services import chroma_server

pytestmark = [pytest.mark.container]

REPO_ROOT = Path(__file__).resolve().parents[2]
# docs/container.md, Image size, says what is in it on CI's debootstrapped base.
SIZE_LIMIT_BYTES = 450_000_000
BUILD_ENV = {**os.environ, "DOCKER_BUILDKIT": "0"}  # Debian's engine: the classic builder


def in_image(image: str, script: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["docker", "run", "--rm", "--network=none", "--entrypoint", "sh", image, "-c", script],
        capture_output=True,
        text=True,
        check=False,
    )


def unused_distributions() -> list[str]:
    text = (REPO_ROOT / "docker" / "unused.txt").read_text(encoding="utf-8")
    lines = (line.split("#", 1)[0].strip() for line in text.splitlines())
    return [line for line in lines if line]


def inspect(image: str, template: str) -> str:
    return subprocess.run(
        ["docker", "image", "inspect", "--format", template, image],
        capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip


def layers(image: str) -> list[str]:
    return list(json.loads(inspect(image, "{{json .RootFS.Layers}}")))


def dockerfile_base() -> str:
    dockerfile = (REPO_ROOT / "Dockerfile").read_text(encoding="utf-8")
    [base] = re.findall(r"^ARG BASE=(\S+)$", dockerfile, re.M)
    return base


def test_the_image_is_at_most_450_mb(action_image: str) -> None:
    size = int(inspect(action_image, "{{.Size}}"))
    assert size <= SIZE_LIMIT_BYTES, f"{size / 1e6:.0f} MB"


def test_the_source_is_in_no_layer_but_the_installed_one(action_image: str) -> None:
    """The build stages hold the copied source; the image has one layer over the base, and
    no layer holds /tmp/retrieval-eval (a copy deleted later would still be pulled)."""
    history = subprocess.run(
        ["docker", "history", "--no-trunc", "--format", "{{.Size}}\t{{.CreatedBy}}", action_image],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    assert "/tmp/retrieval-eval" not in history, history
    base = layers(dockerfile_base())
    assert layers(action_image)[: len(base)] == base
    assert len(layers(action_image)) == len(base) + 1


def test_the_python_base_is_recorded_by_digest(action_image: str) -> None:
    named = inspect(action_image, '{{index .Config.Labels "org.opencontainers.image.base.name"}}')
    assert re.search(r"@sha256:[0-9a-f]{64}$", named), named


def test_two_clean_builds_give_the_same_layers(action_image: str, python_image: str) -> None:
    """Rebuilt with no cache from the same files (the base fetches the same hashed wheels
    again), every layer is the same, byte for byte: a release can be checked by rebuilding."""
    base = "retrieval-eval-ci/rebuilt-base:latest"
    subprocess.run(
        ["docker", "build", "--quiet", "--no-cache", "--network=host",
         "-f", "docker/base.Dockerfile", "--build-arg", f"PYTHON_IMAGE={python_image}",
         "-t", base, "."],
        cwd=REPO_ROOT, env=BUILD_ENV, check=True, capture_output=True,
    )  # fmt: skip
    rebuilt = "retrieval-eval-ci/rebuilt:latest"
    subprocess.run(
        ["docker", "build", "--quiet", "--no-cache", "--network=none",
         "--build-arg", f"BASE={base}", "-t", rebuilt, "."],
        cwd=REPO_ROOT, env=BUILD_ENV, check=True, capture_output=True,
    )  # fmt: skip
    try:
        assert layers(base) == layers(dockerfile_base())
        assert layers(rebuilt) == layers(action_image)
    finally:
        subprocess.run(["docker", "rmi", rebuilt, base], capture_output=True, check=False)


def test_the_image_has_no_git(action_image: str) -> None:
    found = in_image(action_image, "command -v git")
    assert found.returncode != 0 and found.stdout == "", found.stdout


def test_what_the_action_never_imports_is_not_installed(action_image: str) -> None:
    names = unused_distributions()
    assert "kubernetes" in names and "onnx" in names
    # The image has no pip: the distributions are what importlib.metadata finds.
    listed = in_image(
        action_image,
        "python3 -c 'from importlib.metadata import distributions as d; "
        'print("\\n".join(x.metadata["Name"] for x in d()))\'',
    )
    assert listed.returncode == 0, listed.stderr
    installed = {re.sub(r"[-_.]+", "-", line).lower() for line in listed.stdout.splitlines()}
    assert installed, listed.stdout
    assert not installed & set(names), sorted(installed & set(names))
    # The model was built while the image was built, and every run only verifies it.
    verified = in_image(
        action_image, 'retrieval-eval model verify --dir "$RETRIEVAL_EVAL_MODEL_DIR"'
    )
    assert verified.returncode == 0, verified.stderr


def test_the_chromadb_clients_run_in_the_trimmed_image(action_image: str, tmp_path: Path) -> None:
    """The Action's default run never imports chromadb, so the other container tests do not
    show that the trimmed dependencies still serve it. Here both of its clients run in the
    image to a report: `dense` with `persist_dir` (chromadb's embedded client) and `chroma`
    (its HTTP client) against a `chroma run` server on 127.0.0.1, started from this test's
    own environment (the image has no server)."""
    files = project_files()
    files["datasets/semantic.jsonl"] = fixture_lines(SEMANTIC_FIXTURES, retrieval_type="semantic")
    with chroma_server(tmp_path / "chroma") as server:
        files["retrieval-eval.toml"] = CONFIG + (
            '\n[dataset_retrievers]\n"semantic.jsonl" = "dense"\n"keyword.jsonl" = "chroma"\n'
            '\n[retrievers.dense]\npersist_dir = ".chroma"\n'
            f'\n[retrievers.chroma]\nurl = "{server.url}"\n'
        )
        for name, text in files.items():
            (tmp_path / "project" / name).parent.mkdir(parents=True, exist_ok=True)
            (tmp_path / "project" / name).write_text(text, encoding="utf-8")
        done = subprocess.run(
            ["docker", "run", "--rm", "--network=host", "-v", f"{tmp_path / 'project'}:/w",
             "--workdir", "/w", "--entrypoint", "retrieval-eval", action_image,
             "run", "--report-dir", "report"],
            capture_output=True, text=True, check=False,
        )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads((tmp_path / "project" / "report" / "report.json").read_text())
    served = {dataset["name"]: dataset["retriever"] for dataset in report["datasets"]}
    assert served == {"semantic.jsonl": "dense", "keyword.jsonl": "chroma"}, served
    assert (tmp_path / "project" / ".chroma").is_dir()
