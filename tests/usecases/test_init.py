"""`retrieval-eval init` (the use case): what it says and keeps when run again, in a
configured repository, or where it finds no corpus; a configuration it cannot read is
reported, never trusted."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from tests.author.cli import retrieval_eval


@pytest.fixture
def repo(tmp_path: Path, repo_root: Path) -> Path:
    """A project with notes in kb/ and search code in app/search/."""
    shutil.copytree(repo_root / "datasets" / "corpus", tmp_path / "kb")
    code = tmp_path / "app" / "search"
    code.mkdir(parents=True)
    (code / "index.py").write_text("import chromadb\n\nclient = chromadb.Client()\n")
    return tmp_path


@pytest.mark.slow
def test_init_twice_changes_nothing_and_never_overwrites_without_force(repo: Path) -> None:
    assert retrieval_eval("init", cwd=repo).returncode == 0
    snapshot = {p: p.read_bytes() for p in repo.rglob("*") if p.is_file()}

    again = retrieval_eval("init", cwd=repo)
    assert again.returncode == 0
    assert again.stdout.count(": unchanged") == 5  # the four files and .gitignore
    assert {p: p.read_bytes() for p in repo.rglob("*") if p.is_file()} == snapshot

    config = repo / "retrieval-eval.toml"
    config.write_text("tolerance = 0.1\n" + config.read_text())
    kept = retrieval_eval("init", cwd=repo)
    assert "retrieval-eval.toml: exists and differs; kept (use --force" in kept.stdout
    assert config.read_text().startswith("tolerance = 0.1\n")

    forced = retrieval_eval("init", "--force", cwd=repo)
    assert "retrieval-eval.toml: overwritten (--force)" in forced.stdout
    assert "tolerance = 0.1" not in config.read_text()


def test_a_broken_existing_config_is_reported_not_trusted(repo: Path) -> None:
    (repo / "retrieval-eval.toml").write_text("tolerence = 0.1\n")
    result = retrieval_eval("init", cwd=repo)
    assert result.returncode == 2
    assert "retrieval-eval.toml:1: unknown key 'tolerence'" in result.stderr


def test_next_never_suggests_a_corpus_path_that_does_not_exist(tmp_path: Path) -> None:
    result = retrieval_eval("init", cwd=tmp_path)

    assert result.returncode == 0
    next_steps = result.stdout.split("Next:\n", 1)[1]
    assert "--corpus corpus" not in next_steps
    assert "edit retrieval-eval.toml" in next_steps and "corpus does not exist" in next_steps
    assert 'wrote corpus = "corpus"' in result.stderr


def test_rerunning_init_in_a_configured_repository_keeps_its_corpus(tmp_path: Path) -> None:
    """Before, a kept configuration was still announced as "wrote corpus"."""
    (tmp_path / "retrieval-eval.toml").write_text('corpus = "elsewhere"\n')

    result = retrieval_eval("init", cwd=tmp_path)

    assert result.returncode == 0, result.stderr
    assert "wrote corpus" not in result.stderr
    assert "corpus: elsewhere (from retrieval-eval.toml)" in result.stdout
    assert "retrieval-eval.toml: exists and differs; kept" in result.stdout
    workflow = yaml.safe_load((tmp_path / ".github/workflows/retrieval-eval.yml").read_text())
    [step] = [s for s in workflow["jobs"]["evaluate"]["steps"] if "paths" in s.get("with", {})]
    assert "elsewhere/**" in step["with"]["paths"].split()
