"""Publish the fixture model as JSON Schema (``schema/fixture.schema.json``), so editors
can check dataset lines as they are typed. Regenerate after changing the model:

    python -m retrieval_eval.load.fixture_schema schema/fixture.schema.json

A test fails when the committed file and the model disagree.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from retrieval_eval.fileio import atomic_write_text
from retrieval_eval.load.fixtures import Fixture

SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"


def render_fixture_schema() -> str:
    schema = {"$schema": SCHEMA_DIALECT, **Fixture.model_json_schema()}
    return json.dumps(schema, indent=2, ensure_ascii=False) + "\n"


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python -m retrieval_eval.load.fixture_schema OUTPUT.json", file=sys.stderr)
        return 2
    atomic_write_text(Path(argv[0]), render_fixture_schema())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
