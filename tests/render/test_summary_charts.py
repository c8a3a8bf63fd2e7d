"""The job summary's Mermaid charts: GitHub draws them; it would strip inline SVG."""

from __future__ import annotations

from retrieval_eval.render.summary_charts import summary_charts
from tests.render.reports import dataset, mrr_row, query, report


def blocks(text: str) -> list[list[str]]:
    found, current = [], None
    for line in text.splitlines():
        if line == "```mermaid":
            current = []
        elif line == "```" and current is not None:
            found.append(current)
            current = None
        elif current is not None:
            current.append(line.strip())
    return found


def test_this_run_is_drawn_as_bars_against_the_baseline_as_a_line() -> None:
    failing = dataset([query("q1", "a")], rows=[mrr_row(0.8, 0.6, "regressed")], name="b.jsonl")
    passing = dataset([query("q2", "b")], rows=[mrr_row(0.7, 0.7)], name="a.jsonl")

    (chart,) = blocks(summary_charts(report([passing, failing])))

    assert chart[0].startswith("%%{init: ") and chart[1] == "xychart-beta"
    assert 'x-axis ["b.jsonl", "a.jsonl"]' in chart  # failing first
    assert "bar [0.6, 0.7]" in chart and "line [0.8, 0.7]" in chart


def test_each_dataset_with_a_history_gets_its_trend() -> None:
    plain = report([dataset([query("q1", "a")], rows=[mrr_row(0.8, 0.8)])])
    recorded = plain.model_copy(update={"history": {"hybrid.jsonl": {"mrr@10": (0.7, 0.75)}}})
    flat = plain.model_copy(update={"history": {"hybrid.jsonl": {"mrr@10": (0.8, 0.8)}}})

    assert len(blocks(summary_charts(plain))) == 1
    assert len(blocks(summary_charts(flat))) == 1  # a flat trend says nothing
    trend = blocks(summary_charts(recorded))[1]
    assert 'x-axis ["1", "2", "now"]' in trend and "line [0.7, 0.75, 0.8]" in trend


def test_a_hostile_dataset_name_stays_inside_its_label() -> None:
    name = 'x"]\n```\n<img src=x>.jsonl'
    chart = summary_charts(report([dataset([query("q1", "a")], rows=[mrr_row(1, 1)], name=name)]))

    assert chart.count("```") == 2  # one block, opened and closed by us
    assert "<img" not in chart and 'x"]' not in chart
