"""What `retrieval-eval init` detects: the user's retriever and a corpus in `docs/`,
and what it says when it finds neither."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.author.cli import retrieval_eval


def _paths(repo: Path) -> list[str]:
    workflow: dict[Any, Any] = yaml.safe_load(
        (repo / ".github/workflows/retrieval-eval.yml").read_text()
    )
    paths: str = workflow["jobs"]["evaluate"]["steps"][1]["with"]["paths"]
    return paths.split()


def _notes(folder: Path, count: int) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for n in range(count):
        (folder / f"note-{n}.md").write_text(f"# Note {n}\n\nAbout topic {n}.\n")


@pytest.mark.parametrize(
    ("name", "text", "folder"),
    [
        # A TF-IDF module of the standard library alone: named for what it does.
        ("search/retriever.py", "import math\n\nclass DocsSearch:\n    pass\n", "search"),
        # Named neutrally, but it defines the retriever.
        ("app/lib/engine.py", "class DocsSearch:\n    def search(self, q): ...\n", "app/lib"),
        ("src/rag/store.py", "VALUE = 1\n", "src/rag"),
        ("svc/find.ts", "export async function retrieve(q: string) {}\n", "svc"),
    ],
)
def test_the_users_retriever_is_detected_and_in_the_workflow_paths(
    tmp_path: Path, name: str, text: str, folder: str
) -> None:
    _notes(tmp_path / "kb", 3)
    (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / name).write_text(text)
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_search.py").write_text("def test_search(): ...\n")

    result = retrieval_eval("init", cwd=tmp_path)

    assert result.returncode == 0, result.stderr
    assert f"retrieval code: {folder}\n" in result.stdout
    assert "no retrieval code found" not in result.stderr
    assert _paths(tmp_path)[0] == f"{folder}/**"
    assert "tests/**" not in _paths(tmp_path)  # tests do not change the numbers


def test_no_retriever_found_is_a_loud_warning_with_the_line_to_add(tmp_path: Path) -> None:
    _notes(tmp_path / "kb", 3)
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "web.py").write_text("print('hello')\n")

    result = retrieval_eval("init", cwd=tmp_path)

    assert result.returncode == 0
    assert "warning: no retrieval code found" in result.stderr
    assert "[retrievers.custom]" in result.stderr
    assert 'python = "module:factory"' in result.stderr
    assert "`paths` in .github/workflows/retrieval-eval.yml" in result.stderr


@pytest.mark.parametrize(
    ("table", "files", "expected"),
    [
        ('python = "lib.engine.tfidf:make"', ["lib/engine/tfidf.py"], "lib/engine/**"),
        ('python = "lib.engine:make"', ["lib/engine/__init__.py"], "lib/engine/**"),
        ('python = "my_search:make"', ["my_search.py"], "my_search.py"),
        ('command = ["python", "tools/serve/search_cli.py"]', ["tools/serve/search_cli.py"],
         "tools/serve/**"),
    ],
)  # fmt: skip
def test_a_configured_custom_retriever_is_in_paths_and_survives_force(
    tmp_path: Path, table: str, files: list[str], expected: str
) -> None:
    _notes(tmp_path / "kb", 3)
    for name in files:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("def make(): ...\n")
    assert retrieval_eval("init", cwd=tmp_path).returncode == 0
    config = tmp_path / "retrieval-eval.toml"
    config.write_text(config.read_text() + f"\n[retrievers.custom]\n{table}\n")

    result = retrieval_eval("init", "--force", cwd=tmp_path)

    assert result.returncode == 0, result.stderr
    assert expected in _paths(tmp_path)
    assert f"[retrievers.custom]\n{table}\n" in config.read_text()  # --force kept it
    again = retrieval_eval("init", cwd=tmp_path)
    assert "retrieval-eval.toml: unchanged" in again.stdout


def test_a_markdown_corpus_in_docs_notes_is_detected(tmp_path: Path) -> None:
    _notes(tmp_path / "docs" / "notes", 68)
    (tmp_path / "search").mkdir()
    (tmp_path / "search" / "retriever.py").write_text("class DocsSearch: ...\n")

    result = retrieval_eval("init", cwd=tmp_path)

    assert result.returncode == 0, result.stderr
    assert "corpus: docs (68 Markdown notes in a documentation folder)" in result.stdout
    assert 'corpus = "docs"' in (tmp_path / "retrieval-eval.toml").read_text()
    assert "docs/**" in _paths(tmp_path)


def test_docs_skipped_for_another_corpus_is_said_with_the_flag_to_use(tmp_path: Path) -> None:
    _notes(tmp_path / "docs", 68)
    _notes(tmp_path / "kb", 5)

    result = retrieval_eval("init", cwd=tmp_path)

    assert "corpus: kb (5 Markdown notes)" in result.stdout
    assert "68 Markdown files in docs/ were skipped because" in result.stderr
    assert "retrieval-eval init --corpus docs --force" in result.stderr


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
    assert "elsewhere/**" in _paths(tmp_path)
