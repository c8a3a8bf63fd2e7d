"""What the top of the comment says about each dataset: failing or not, its status, its trend.

A reviewer reads the verdict, then one row per dataset, failing rows first; the failing
datasets' sections follow, open, and the passing ones' inside one collapsed section.
These helpers decide that order and the words.
"""

from __future__ import annotations

from collections.abc import Sequence

from retrieval_eval.compare.gate import HISTORY_DIGITS, within_one_query
from retrieval_eval.render.escape import escape_markdown
from retrieval_eval.render.filters import number, p_value, percent, pluralize, signed
from retrieval_eval.results import DatasetReport, MetricRow, RunReport
from retrieval_eval.score.measure_names import metric_label
from retrieval_eval.vocabulary import ROW_STATUS, ROW_STATUS_TEXT, VERDICT_ICON

# Eight heights, lowest first (U+2581..U+2588).
SPARK_LEVELS = "▁▂▃▄▅▆▇█"
# Keeps a cell's parts on one line in a narrow comment column ("▇▇▁ 0.650", "❌ regressed").
NO_BREAK = "\u00a0"
# A query id ("sem-004") wraps at its hyphens in a narrow column; U+2011 looks the same
# and never breaks.
NON_BREAKING_HYPHEN = "\u2011"


def is_failing(dataset: DatasetReport) -> bool:
    """Regressed, breached a threshold or ceiling, failed a query check, or has a fixture that
    failed its assertion."""
    return (
        bool(dataset.failures)
        or any(check.failed for check in dataset.query_checks)
        or any(ROW_STATUS[row.status].failing for row in dataset.rows)
    )


def failing_first(datasets: Sequence[DatasetReport]) -> list[DatasetReport]:
    """Failing datasets first; otherwise the run's (alphabetical) order is kept."""
    return sorted(datasets, key=lambda dataset: not is_failing(dataset))


def dataset_status(dataset: DatasetReport) -> str:
    """The worst thing about a dataset, as its summary row and heading show it, naming the
    metrics it is about ("❌ regressed: P@5")."""
    failed = [check for check in dataset.query_checks if check.failed]
    for check in failed:
        if check.check == "removed-queries":
            return f"❌ {check.count} of {check.baselined} queries removed"
    for status in ("regressed", "below-threshold", "above-ceiling"):
        named = [metric_label(row.metric) for row in dataset.rows if row.status == status]
        if named:
            return f"{ROW_STATUS_TEXT[status]}: {', '.join(named)}"
    for check in failed:
        return f"❌ {pluralize(check.count, 'query', 'queries')} lost every hit"
    if dataset.failures:
        return f"❌ {pluralize(len(dataset.failures), 'fixture')} failed"
    if dataset.baseline_established:
        return f"{VERDICT_ICON['baseline-established']} new baseline"
    for status in ("review", "within-noise"):
        named = [metric_label(row.metric) for row in dataset.rows if row.status == status]
        if named:
            return f"{ROW_STATUS_TEXT[status]}: {', '.join(named)}"
    if "improved" in {row.status for row in dataset.rows}:
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
    """The recorded runs and this one, oldest first, as a sparkline ('' without history).
    This run's value is rounded as the history rounds the values it records: unrounded,
    an unchanged system would draw its flat series as a jump (``▁▁▁▁█``)."""
    row = metric_row(dataset, metric)
    past = report.history.get(dataset.name, {}).get(metric, ())
    if row is None or not past:
        return ""
    return sparkline([*past, round(row.current, HISTORY_DIGITS)])


def value_text(row: MetricRow | None, spark: str = "") -> str:
    """The current value, after its sparkline when there is one."""
    value = "—" if row is None else number(row.current, row.metric)
    return f"{spark}{NO_BREAK}{value}" if spark else value


def resolution_text(row: MetricRow) -> str:
    """``1 query = 0.8 pts``: the most one query moves the mean, in points (hundredths)."""
    if row.resolution is None:
        return "—"
    points = row.resolution * 100
    shown = f"{points:.1f}" if points >= 0.1 else f"{points:.2g}"
    return f"1{NO_BREAK}query{NO_BREAK}={NO_BREAK}{shown}{NO_BREAK}pts"


def row_status_text(row: MetricRow) -> str:
    """The row's status; a drop no larger than one query's worth says so."""
    text = ROW_STATUS_TEXT[row.status]
    return f"{text} · within 1 query" if within_one_query(row) else text


def row_p_value(row: MetricRow) -> str:
    """The paired test's p-value of a change; ``—`` when nothing moved or there is no test."""
    if row.p_value is None or not row.delta:
        return "—"
    return p_value(row.p_value)


def no_break(text: str) -> str:
    return text.replace(" ", NO_BREAK)


def query_id_cell(query_id: str, url: str | None = None) -> str:
    """A query id as one unbroken ``<code>`` word, linked to ``url`` (its fixture's line)
    when given, with the id as typed (plain hyphens) as the link's title."""
    escaped = escape_markdown(query_id)
    shown = f"<code>{escaped.replace('-', NON_BREAKING_HYPHEN)}</code>"
    if url is None:
        return shown
    return f'[{shown}]({url} "{escaped}")'
