"""`retrieval-eval schema [FOLDER]`: write the JSON Schemas published in ``schema/``.

report.json's and baseline.json's come from their models (as serialized), a dataset
line's from the fixture model (``load/fixture_schema.py``). After changing a model,
``retrieval-eval schema schema/`` regenerates them; a test fails when they drift.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click
from pydantic import BaseModel

from retrieval_eval.compare.baseline import Baseline
from retrieval_eval.fileio import atomic_write_text
from retrieval_eval.load.fixture_schema import SCHEMA_DIALECT, render_fixture_schema
from retrieval_eval.results import RunReport
from retrieval_eval.vocabulary import ExitCode


def schema_text(model: type[BaseModel]) -> str:
    schema: dict[str, Any] = model.model_json_schema(mode="serialization")
    schema["$schema"] = SCHEMA_DIALECT
    return json.dumps(schema, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


# file name in schema/ -> its text
SCHEMA_FILES: dict[str, Callable[[], str]] = {
    "report.schema.json": lambda: schema_text(RunReport),
    "baseline.schema.json": lambda: schema_text(Baseline),
    "fixture.schema.json": render_fixture_schema,
}


@click.command("schema")
@click.argument(
    "folder",
    required=False,
    default="schema",
    type=click.Path(file_okay=False, path_type=Path),
)
def schema(folder: Path) -> int:
    """Write the JSON Schemas of report.json, baseline.json and a dataset line into
    FOLDER (default: schema)."""
    for name, render in SCHEMA_FILES.items():
        atomic_write_text(folder / name, render())
        click.echo(f"wrote {folder / name}", err=True)
    return int(ExitCode.OK)
