"""The README badge: a shields.io endpoint JSON with the headline metric and the verdict.

shields.io draws a badge from any URL that answers
``{"schemaVersion": 1, "label": ..., "message": ..., "color": ...}``
(https://shields.io/badges/endpoint-badge); the push to the default branch writes this
file beside the history, and a committed copy's raw URL is what the README points at.
"""

from __future__ import annotations

import json
from pathlib import Path

from retrieval_eval.render.filters import number
from retrieval_eval.results import RunReport
from retrieval_eval.score.measure_names import metric_label
from retrieval_eval.vocabulary import verdict_words

BADGE_FILE = "retrieval-eval-badge.json"


def badge_path(history: Path) -> Path:
    """Where a push run writes the badge: beside the history."""
    return history.with_name(BADGE_FILE)


def badge_json(report: RunReport) -> str:
    """The headline metric (the first of ``measures``) and the verdict:
    ``retrieval MRR@10 | 0.851 · passed``. With several datasets it shows the lowest
    value: a gate is only as good as its weakest dataset."""
    metric = report.measures[0]
    values = [row.current for d in report.datasets for row in d.rows if row.metric == metric]
    shown = f"{number(min(values), metric)} · " if values else ""
    badge = {
        "schemaVersion": 1,
        "label": f"retrieval {metric_label(metric)}",
        "message": f"{shown}{report.verdict.replace('-', ' ')}",
        "color": verdict_words(report.verdict).badge,
    }
    return json.dumps(badge, ensure_ascii=False) + "\n"
