"""What the top of the comment says about each dataset: failing or not, its status, its trend.

A reviewer reads the verdict, then one row per dataset, failing rows first; the failing
datasets' sections follow, open, and the passing ones' inside one collapsed section.
These helpers decide that order and the words.
"""

from __future__ import annotations

from collections.abc import Sequence

from retrieval_eval.render.filters import number, percent, pluralize, signed
from retrieval_eval.results import DatasetReport, MetricRow, RunReport
from retrieval_eval.vocabulary import BREACHED, ROW_STATUS_TEXT, VERDICT_ICON

# Eight heights, lowest first (U+2581..U+2588).
SPARK_LEVELS = "▁▂▃▄▅▆▇█"
# Keeps a cell's parts on one line in a narrow comment column ("▇▇▁ 0.650", "❌ regressed").
NO_BREAK = "\u00a0"


def is_failing(dataset: DatasetReport) -> bool:
    """Regressed, breached a threshold or ceiling, or has a fixture that failed its assertion."""
    return bool(dataset.failures) or any(
        row.status == "regressed" or row.status in BREACHED for row in dataset.rows
    )


def failing_first(datasets: Sequence[DatasetReport]) -> list[DatasetReport]:
    """Failing datasets first; otherwise the run's (alphabetical) order is kept."""
    return sorted(datasets, key=lambda dataset: not is_failing(dataset))


def dataset_status(dataset: DatasetReport) -> str:
    """The worst thing about a dataset, as its summary row and heading show it."""
    statuses = {row.status for row in dataset.rows}
    for status in ("regressed", "below-threshold", "above-ceiling"):
        if status in statuses:
            return ROW_STATUS_TEXT[status]
    if dataset.failures:
        return f"❌ {pluralize(len(dataset.failures), 'fixture')} failed"
    if dataset.baseline_established:
        return f"{VERDICT_ICON['baseline-established']} new baseline"
    if "improved" in statuses:
        return ROW_STATUS_TEXT["improved"]
    return ROW_STATUS_TEXT["ok"]


def metric_row(dataset: DatasetReport, metric: str) -> MetricRow | None:
    return next((row for row in dataset.rows if row.metric == metric), None)


def delta_text(row: MetricRow | None) -> str:
    """``−7.3%``, relative like the tolerance (``+0.062`` from a zero baseline); ``—`` when
    there is nothing to compare with. The dataset's full table has both."""
    if row is None or row.delta is None:
        return "—"
    return signed(row.delta, row.metric) if row.delta_pct is None else percent(row.delta_pct)


def sparkline(values: Sequence[float]) -> str:
    """``▁▂▃▅▇``: each value's height between the series' lowest and highest."""
    if len(values) < 2:
        return ""
    low, high = min(values), max(values)
    if high - low < 1e-9:
        return SPARK_LEVELS[3] * len(values)
    top = len(SPARK_LEVELS) - 1
    return "".join(SPARK_LEVELS[round((value - low) / (high - low) * top)] for value in values)


def trend(report: RunReport, dataset: DatasetReport, metric: str) -> str:
    """The recorded runs and this one, oldest first, as a sparkline ('' without history)."""
    row = metric_row(dataset, metric)
    past = report.history.get(dataset.name, {}).get(metric, ())
    if row is None or not past:
        return ""
    return sparkline([*past, row.current])


def value_text(row: MetricRow | None, spark: str = "") -> str:
    """The current value, after its sparkline when there is one."""
    value = "—" if row is None else number(row.current, row.metric)
    return f"{spark}{NO_BREAK}{value}" if spark else value


def no_break(text: str) -> str:
    return text.replace(" ", NO_BREAK)
