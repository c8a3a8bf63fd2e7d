"""`retrieval_eval.api`, the one module a team's code imports from: the docs and the
examples use it and nothing internal, and it holds every type they name."""

from __future__ import annotations

import re
from pathlib import Path

import retrieval_eval.api as api

REPO = Path(__file__).resolve().parents[1]
# Where a team's code is shown: the page on writing and plugging in retrievers, and the
# examples, are read whole; every other page's code blocks are read for imports.
READ_WHOLE = [REPO / "docs" / "retrievers.md", *sorted((REPO / "examples").rglob("*.py"))]
CODE = re.compile(r"```(?:python|py)\n(.*?)```", re.DOTALL)
DOTTED = re.compile(r"\bretrieval_eval((?:\.\w+)+)")
IMPORT = re.compile(r"^\s*(?:from|import)\s+(retrieval_eval(?:\.\w+)*)", re.MULTILINE)


def internal_paths(text: str) -> list[str]:
    """Dotted paths into the package other than ``retrieval_eval.api[.NAME]``."""
    return [
        f"retrieval_eval{dotted}"
        for dotted in DOTTED.findall(text)
        if not dotted.startswith(".api")
    ]


def test_docs_and_examples_name_no_internal_module() -> None:
    found = {
        str(path.relative_to(REPO)): internal_paths(path.read_text(encoding="utf-8"))
        for path in READ_WHOLE
    }
    assert {path: paths for path, paths in found.items() if paths} == {}


def test_no_code_block_in_the_docs_imports_an_internal_module() -> None:
    pages = [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]
    found = {
        str(page.relative_to(REPO)): [
            module
            for block in CODE.findall(page.read_text(encoding="utf-8"))
            for module in IMPORT.findall(block)
            if module not in ("retrieval_eval", "retrieval_eval.api")
        ]
        for page in pages
    }
    assert {page: modules for page, modules in found.items() if modules} == {}


def test_every_name_the_docs_import_from_the_api_is_there() -> None:
    text = (REPO / "docs" / "retrievers.md").read_text(encoding="utf-8")
    names = {
        name.strip()
        for imported in re.findall(r"from retrieval_eval\.api import ([^\n]+)", text)
        for name in imported.strip("()").split(",")
    }
    assert names and names <= set(api.__all__)


def test_the_check_catches_an_internal_path() -> None:
    assert internal_paths("from retrieval_eval.retrieval.base import Hit") == [
        "retrieval_eval.retrieval.base"
    ]
    assert internal_paths("import retrieval_eval.load.documents") == [
        "retrieval_eval.load.documents"
    ]
    assert internal_paths("from retrieval_eval.api import Hit, SearchResult") == []
