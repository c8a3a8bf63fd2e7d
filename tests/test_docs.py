"""README.md and docs/ say what the product does: a new user adopts it from them alone.

Each test reads the documentation as a user would and checks it against the product: the
Action a workflow snippet names, links between pages, ...
"""

from __future__ import annotations

import re
from pathlib import Path

from retrieval_eval.author.scaffold import ACTION

REPO = Path(__file__).resolve().parents[1]
PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]


def page_text(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def test_every_workflow_snippet_uses_the_action_init_writes() -> None:
    """A snippet copied from any page must name the Action `retrieval-eval init` writes."""
    owner = ACTION.split("/")[0]
    wrong = [
        f"{path.relative_to(REPO)}: {match.group(0)}"
        for path in PAGES
        for match in re.finditer(r"uses:\s*([\w.-]+)/retrieval-eval@\S+", page_text(path))
        if match.group(1) != owner
    ]
    assert wrong == []
