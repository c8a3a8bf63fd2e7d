"""A mermaid chart of baseline vs current (GitHub renders mermaid in comments)."""

from __future__ import annotations

import re

from retrieval_eval.results import RunReport
from retrieval_eval.vocabulary import metric_label

# Mermaid labels are double-quoted strings; keep them to characters that cannot end one.
_UNSAFE = re.compile(r"[^A-Za-z0-9@ ._/-]")


def mermaid_chart(
    report: RunReport, *, metrics_per_dataset: int = 2, max_bars: int = 16
) -> str | None:
    """Bars for the baseline, a line for the current run.

    Kept small on purpose (the tables carry every number): the first two measures
    (MRR@10 and NDCG@10 by default) of each dataset, all on the same 0..1 scale.
    """
    charted = set(report.measures[:metrics_per_dataset])
    labels: list[str] = []
    before: list[float] = []
    after: list[float] = []
    for dataset in report.datasets:
        stem = dataset.name.removesuffix(".jsonl")
        for row in dataset.rows:
            if row.metric not in charted:
                continue
            labels.append(_UNSAFE.sub("", f"{stem} {metric_label(row.metric)}")[:40])
            before.append(row.current if row.baseline is None else row.baseline)
            after.append(row.current)
    if not labels:
        return None
    labels, before, after = labels[:max_bars], before[:max_bars], after[:max_bars]
    compared = any(row.baseline is not None for d in report.datasets for row in d.rows)
    title = "Baseline (bars) vs current (line)" if compared else "Current run (new baseline)"
    lines = [
        "```mermaid",
        # Horizontal: dataset-and-metric labels are too long to sit side by side under bars.
        "xychart-beta horizontal",
        f'  title "{title}"',
        "  x-axis [" + ", ".join(f'"{label}"' for label in labels) + "]",
        '  y-axis "score" 0 --> 1',
        "  bar [" + ", ".join(f"{value:.3f}" for value in before) + "]",
    ]
    if compared:
        lines.append("  line [" + ", ".join(f"{value:.3f}" for value in after) + "]")
    lines.append("```")
    return "\n".join(lines)
