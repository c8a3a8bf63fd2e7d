"""`retrieval-eval init` through the console script: its flags (--root, --corpus,
--datasets, --fork-safe, --force) reach the scaffold, what it writes is said file by file,
and a missing root is a usage error naming --root."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.author.cli import retrieval_eval


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "notes").mkdir(parents=True)
    (root / "notes" / "a.md").write_text("# A\n\nalpha\n", encoding="utf-8")
    (root / "notes" / "b.md").write_text("# B\n\nbeta\n", encoding="utf-8")
    return root


def test_the_flags_reach_the_scaffold_in_the_root_they_name(repo: Path) -> None:
    done = retrieval_eval(
        "init",
        "--root",
        "repo",
        "--corpus",
        "notes",
        "--datasets",
        "golden",
        "--fork-safe",
        cwd=repo.parent,
    )

    assert done.returncode == 0, done.stderr
    config = (repo / "retrieval-eval.toml").read_text(encoding="utf-8")
    assert 'datasets = "golden"\ncorpus = "notes"\n' in config
    assert (repo / "golden" / "README.md").is_file()
    assert (repo / ".github" / "workflows" / "retrieval-eval-publish.yml").is_file()
    assert not (repo.parent / "retrieval-eval.toml").exists()  # the root, not the cwd
    assert "golden/README.md: written" in done.stdout.splitlines()
    assert ".github/workflows/retrieval-eval-publish.yml: written" in done.stdout.splitlines()


def test_without_fork_safe_no_publish_workflow_and_force_overwrites(repo: Path) -> None:
    assert retrieval_eval("init", "--corpus", "notes", cwd=repo).returncode == 0
    assert not (repo / ".github" / "workflows" / "retrieval-eval-publish.yml").exists()
    config = repo / "retrieval-eval.toml"
    config.write_text("k = 3\n", encoding="utf-8")

    kept = retrieval_eval("init", "--corpus", "notes", cwd=repo)
    forced = retrieval_eval("init", "--corpus", "notes", "--force", cwd=repo)

    assert kept.returncode == 0 and forced.returncode == 0, forced.stderr
    assert "retrieval-eval.toml: exists and differs; kept" in kept.stdout
    assert 'corpus = "notes"' in config.read_text(encoding="utf-8")


def test_a_missing_root_is_a_usage_error_naming_it(tmp_path: Path) -> None:
    done = retrieval_eval("init", "--root", "nowhere", cwd=tmp_path)

    assert done.returncode == 2
    assert "Invalid value for '--root'" in done.stderr
    assert list(tmp_path.iterdir()) == []
