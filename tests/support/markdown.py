"""Reading the Markdown tables of README.md and docs/ in tests."""

from __future__ import annotations


def table_rows(markdown: str, first_header: str) -> list[list[str]]:
    """The body rows of the first table whose header starts with `first_header`."""
    lines = markdown.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"| {first_header} |"))
    rows = []
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        rows.append([cell.strip() for cell in line.strip().strip("|").split(" | ")])
    return rows
