"""Small builders for dataset lines, so each test shows only the line it breaks."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def fixture(query_id: str, retrieval_type: str = "semantic", **fields: Any) -> dict[str, Any]:
    record: dict[str, Any] = {
        "query_id": query_id,
        "query": f"question {query_id}",
        "retrieval_type": retrieval_type,
        "expected_top_k_ids": ["doc-a"],
        "ground_truth_source": "human-annotated",
    }
    record.update(fields)
    return record


def line(record: dict[str, Any]) -> str:
    return json.dumps(record) + "\n"


def write_dataset(path: Path, lines: list[str]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(lines), encoding="utf-8")
    return path


def full_dataset(
    path: Path, retrieval_type: str, *, count: int = 20, prefix: str | None = None
) -> Path:
    """A valid file with ``count`` human-annotated fixtures."""
    prefix = prefix or retrieval_type[:3]
    return write_dataset(
        path, [line(fixture(f"{prefix}-{i:03d}", retrieval_type)) for i in range(1, count + 1)]
    )
