"""JSON Schemas of report.json and baseline.json, generated from their models.

The published files in ``schema/`` are regenerated with
``python -m retrieval_eval.commands.json_schema schema/``; a test fails when they
drift from the models.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from retrieval_eval.compare.baseline import Baseline
from retrieval_eval.fileio import atomic_write_text
from retrieval_eval.results import RunReport

SCHEMA_FILES: dict[str, type[BaseModel]] = {
    "report.schema.json": RunReport,
    "baseline.schema.json": Baseline,
}


def schema_text(model: type[BaseModel]) -> str:
    schema: dict[str, Any] = model.model_json_schema(mode="serialization")
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    return json.dumps(schema, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def main(argv: list[str]) -> int:
    folder = Path(argv[0]) if argv else Path("schema")
    for name, model in SCHEMA_FILES.items():
        atomic_write_text(folder / name, schema_text(model))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
