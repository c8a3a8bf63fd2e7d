"""The badge's endpoint JSON: shields.io's schema, the headline metric and the verdict."""

from __future__ import annotations

import json

from retrieval_eval.render.badge import badge_json
from tests.render.reports import dataset, mrr_row, query, report


def test_several_datasets_show_the_weakest_value() -> None:
    built = report(
        [
            dataset([query("q1", "a")], rows=[mrr_row(0.9, 0.91)], name="a.jsonl"),
            dataset([query("q2", "b")], rows=[mrr_row(0.8, 0.62)], name="b.jsonl"),
        ]
    )

    assert json.loads(badge_json(built)) == {
        "schemaVersion": 1,
        "label": "retrieval MRR@10",
        "message": "0.620 · passed",
        "color": "brightgreen",
    }
