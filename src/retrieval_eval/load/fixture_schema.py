"""Publish the fixture model as JSON Schema (``schema/fixture.schema.json``), so editors
can check dataset lines as they are typed. ``retrieval-eval schema schema/`` writes it
with the other published schemas; a test fails when the committed file and the model
disagree.
"""

from __future__ import annotations

import json

from retrieval_eval.load.fixtures import Fixture

SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"


def render_fixture_schema() -> str:
    schema = {"$schema": SCHEMA_DIALECT, **Fixture.model_json_schema()}
    return json.dumps(schema, indent=2, ensure_ascii=False) + "\n"
