"""schema/report.schema.json and schema/baseline.schema.json match the models they come from."""

from __future__ import annotations

from pathlib import Path

import pytest

from retrieval_eval.commands.json_schema import SCHEMA_FILES, schema_text


@pytest.mark.parametrize("name", sorted(SCHEMA_FILES))
def test_published_schema_matches_the_model(repo_root: Path, name: str) -> None:
    published = (repo_root / "schema" / name).read_text(encoding="utf-8")
    assert published == schema_text(SCHEMA_FILES[name]), (
        f"schema/{name} is out of date: run `python -m retrieval_eval.commands.json_schema schema/`"
    )
