"""The package reads as the pipeline it runs, and its imports point one way.

Each stage may import itself, the stages before it and the shared modules; it
never imports a later stage or an edge. docs/architecture.md draws the same
order. The walk reads every import statement in ``src/`` (also those inside
functions), so a lazy import cannot hide an upward dependency.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "retrieval_eval"

# The pipeline, first to last. `settings` composes the stages' own configuration types
# (retriever tables, judge pricing, measure names), so it comes after them; `compare` is the
# first stage that reads the whole settings object. `pipeline` calls every stage in turn.
STAGES = (
    "load",
    "validate",
    "index",
    "retrieval",
    "score",
    "trec",
    "settings",
    "compare",
    "render",
    "pipeline",
)
# Small modules every stage may use; they import nothing but each other. `trust` keeps
# secrets out of child processes and redacts every line written out; `sharding` picks a
# shard's slice of chunks or queries; `claude_api` is the one Messages API call and reply
# parser the judge, the reranker and `generate` share.
SHARED = frozenset(
    {"", "errors", "fileio", "vocabulary", "results", "progress", "trust", "sharding", "claude_api"}
)
# The edges: they call the pipeline or the stages, nothing calls them. `author` holds the
# authoring tools behind `init`, `generate` and `review`.
EDGES = frozenset({"action", "commands", "author", "cli", "__main__"})


def unit_of(module: str) -> str:
    """`retrieval_eval.score.measurements` -> `score`; `retrieval_eval` -> ``""``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def module_name(path: Path) -> str:
    relative = path.relative_to(PACKAGE.parent).with_suffix("")
    parts = relative.parts[:-1] if relative.name == "__init__" else relative.parts
    return ".".join(parts)


def imports(path: Path) -> list[tuple[int, str]]:
    """(line, imported retrieval_eval module) for every import in the file."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.lineno, node.module))
            # `from retrieval_eval import x` names a submodule when x is one.
            if node.module == "retrieval_eval":
                found += [(node.lineno, f"retrieval_eval.{a.name}") for a in node.names]
    return [(line, name) for line, name in found if name.split(".")[0] == "retrieval_eval"]


def allowed(importer: str, imported: str) -> bool:
    if imported in SHARED or importer == imported:
        return True
    if importer in EDGES:
        return True
    if importer in SHARED or imported in EDGES:
        return False
    return STAGES.index(imported) <= STAGES.index(importer)


def violations() -> list[str]:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        importer = unit_of(module_name(path))
        for line, name in imports(path):
            imported = unit_of(name)
            if imported == "__version__":
                imported = ""
            if not allowed(importer, imported):
                where = path.relative_to(PACKAGE.parent)
                found.append(f"{where}:{line}: {importer} imports {name}")
    return found


def test_every_unit_is_placed() -> None:
    units = {unit_of(module_name(path)) for path in PACKAGE.rglob("*.py")}
    assert units == set(STAGES) | SHARED | EDGES


def test_imports_point_down_the_pipeline() -> None:
    assert violations() == []


@pytest.mark.parametrize(
    ("importer", "imported", "expected"),
    [
        ("score", "retrieval", True),
        ("retrieval", "score", False),
        ("render", "compare", True),
        ("compare", "render", False),
        ("load", "errors", True),
        ("vocabulary", "settings", False),
        ("pipeline", "action", False),
        ("action", "pipeline", True),
        ("trec", "score", True),
        ("score", "trec", False),
    ],
)
def test_the_rule_itself(importer: str, imported: str, expected: bool) -> None:
    assert allowed(importer, imported) is expected
