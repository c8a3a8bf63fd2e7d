"""What the Action's image holds: under 600 MB, no git, none of docker/unused.txt.

The runner pulls the whole image before every job that uses the Action, so its size is
start time. The other container tests run the whole Action in this same image, which is
what shows that nothing removed here was needed.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

pytestmark = [pytest.mark.container]

REPO_ROOT = Path(__file__).resolve().parents[2]
SIZE_LIMIT_BYTES = 600_000_000


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


def test_the_image_is_under_600_mb(action_image: str) -> None:
    size = subprocess.run(
        ["docker", "image", "inspect", "--format", "{{.Size}}", action_image],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    assert int(size) < SIZE_LIMIT_BYTES, f"{int(size) / 1e6:.0f} MB"


def test_the_image_has_no_git(action_image: str) -> None:
    found = in_image(action_image, "command -v git")
    assert found.returncode != 0 and found.stdout == "", found.stdout


def test_what_the_action_never_imports_is_not_installed(action_image: str) -> None:
    names = unused_distributions()
    assert "kubernetes" in names and "onnx" in names
    listed = in_image(action_image, "pip list --format=freeze")
    assert listed.returncode == 0, listed.stderr
    installed = {
        re.split(r"==", line)[0].lower().replace("_", "-") for line in listed.stdout.splitlines()
    }
    assert installed, listed.stdout
    assert installed.isdisjoint(names)
    # The model was built while the image was built, and every run only verifies it.
    verified = in_image(
        action_image, 'retrieval-eval model verify --dir "$RETRIEVAL_EVAL_MODEL_DIR"'
    )
    assert verified.returncode == 0, verified.stderr
