"""The retriever contract's protocols, read from the source that declares them."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "src" / "retrieval_eval"
# Where the contract's protocols are declared: base.py, and timed.py for the one that speaks
# in its query and timed-result types.
CONTRACT = (PACKAGE / "retrieval" / "base.py", PACKAGE / "retrieval" / "timed.py")


def protocols() -> dict[str, tuple[bool, tuple[str, ...]]]:
    """Each protocol of the contract: whether it is runtime_checkable, and its members."""
    found: dict[str, tuple[bool, tuple[str, ...]]] = {}
    for path in CONTRACT:
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if not isinstance(node, ast.ClassDef):
                continue
            if not any(isinstance(b, ast.Name) and b.id == "Protocol" for b in node.bases):
                continue
            checkable = any(
                isinstance(d, ast.Name) and d.id == "runtime_checkable" for d in node.decorator_list
            )
            members = tuple(
                item.name if isinstance(item, ast.FunctionDef) else ast.unparse(item.target)
                for item in node.body
                if isinstance(item, ast.FunctionDef | ast.AnnAssign)
            )
            found[node.name] = (checkable, members)
    return found
