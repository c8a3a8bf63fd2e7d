"""The job summary's charts, as Mermaid ``xychart-beta`` blocks.

GitHub draws Mermaid in the Markdown of job summaries, comments and files, but strips
inline ``<svg>`` and ``data:`` images from it, so the job summary's charts are Mermaid
source that GitHub renders; report.html has the full SVG charts. The PR comment has
none: it stays small and shows the same trend as sparklines.
"""

from __future__ import annotations

from retrieval_eval.compare.gate import HISTORY_DIGITS
from retrieval_eval.render.escape import mermaid_label
from retrieval_eval.render.summary import failing_first, metric_row
from retrieval_eval.results import RunReport
from retrieval_eval.score.measure_names import metric_label
from retrieval_eval.vocabulary import LOWER_IS_BETTER

# Trend charts for at most this many datasets (failing first): a summary, not the report.
MAX_TREND_CHARTS = 5
# Mermaid's default palette draws the first line in a pale lavender that barely shows on
# white; the bars are light and the lines dark, and the charts short.
INIT = (
    '%%{init: {"xyChart": {"height": 260}, "themeVariables": {"xyChart": '
    '{"plotColorPalette": "#9ec5fe, #0550ae"}}}}%%'
)
# A trend that moved less than this (the report's three decimals) is flat.
FLAT = 0.0005
TREND_INIT = INIT.replace("#9ec5fe, #0550ae", "#0550ae")


def _values(values: list[float]) -> str:
    return "[" + ", ".join(f"{value:.4g}" for value in values) + "]"


def summary_charts(report: RunReport) -> str:
    """The headline metric per dataset (bars: this run, line: the baseline), then the trend
    over the recorded runs of each dataset whose value moved; '' when nothing is drawn."""
    if not report.datasets or not report.measures:
        return ""
    metric = report.measures[0]
    label = mermaid_label(metric_label(metric))
    datasets = failing_first(report.datasets)
    rows = [(d, metric_row(d, metric)) for d in datasets]
    shown = [(d, row) for d, row in rows if row is not None]
    if not shown:
        return ""
    names = ", ".join(f'"{mermaid_label(d.name)}"' for d, _ in shown)
    current = [row.current for _, row in shown]
    baseline = [row.baseline for _, row in shown]
    top = 1 if metric not in LOWER_IS_BETTER and max(current) <= 1 else max(current) * 1.1
    has_baseline = all(value is not None for value in baseline)
    title = f"{label}: this run (bars)" + (" and the baseline (line)" if has_baseline else "")
    blocks = [
        "```mermaid",
        INIT,
        "xychart-beta",
        f'    title "{title}"',
        f"    x-axis [{names}]",
        f'    y-axis "{label}" 0 --> {top:g}',
        f"    bar {_values(current)}",
    ]
    if has_baseline:
        blocks.append(f"    line {_values([v for v in baseline if v is not None])}")
    blocks.append("```")
    drawn = 0
    for dataset, row in shown:
        past = report.history.get(dataset.name, {}).get(metric, ())
        values = [*past, round(row.current, HISTORY_DIGITS)]
        if not past or max(values) - min(values) < FLAT or drawn == MAX_TREND_CHARTS:
            continue  # a flat trend says nothing the table does not
        drawn += 1
        ticks = ", ".join([*(f'"{i + 1}"' for i in range(len(past))), '"now"'])
        blocks += [
            "",
            "```mermaid",
            TREND_INIT,
            "xychart-beta",
            f'    title "{mermaid_label(dataset.name)} {label}: the last runs, this one last"',
            f"    x-axis [{ticks}]",
            f'    y-axis "{label}" 0 --> {top:g}',
            f"    line {_values(values)}",
            "```",
        ]
    return "\n".join(blocks) + "\n"
