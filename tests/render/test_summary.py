"""The top of the comment: the verdict, one row per dataset (failing first), the trend."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from retrieval_eval.render.markdown import render_markdown
from retrieval_eval.render.summary import SPARK_LEVELS, sparkline
from retrieval_eval.results import MetricRow, QueryMove
from tests.render.github_html import read, table_with_header
from tests.render.reports import dataset, mrr_row, query, report

HOSTILE_DOC = "notes/<img src=x>|@here.md"
NBSP = "\u00a0"


def ndcg_row(baseline: float, current: float, status: str = "ok") -> MetricRow:
    row = mrr_row(baseline, current, status)
    return row.model_copy(update={"metric": "ndcg@10", "threshold": None})


def seven_rows(status: str = "ok") -> list[MetricRow]:
    """A dataset's full table, as this repository's config measures it: seven rows."""
    rows = [mrr_row(0.8, 0.8), ndcg_row(0.7, 0.7)]
    for metric in ("p@5", "recall@10", "groundedness", "latency_p95_ms", "cost_per_query_usd"):
        rows.append(mrr_row(0.5, 0.5).model_copy(update={"metric": metric, "threshold": None}))
    if status != "ok":
        rows[0] = mrr_row(0.8, 0.6, status)
    return rows


def three_datasets(failing: str | None = None) -> list:  # type: ignore[type-arg]
    move = QueryMove(
        query_id="t-07",
        query="cheap hostel in Alfama",
        metric="mrr@10",
        baseline=1.0,
        current=0.25,
        rank_before=1,
        rank_after=4,
        top_after=HOSTILE_DOC,
    )
    made = []
    for name in ("hybrid.jsonl", "keyword.jsonl", "semantic.jsonl"):
        broken = name == failing
        made.append(
            dataset(
                [query("t-07", "cheap hostel in Alfama", rank=4 if broken else 1)],
                rows=seven_rows("regressed" if broken else "ok"),
                moves=[move] if broken else [],
                name=name,
            )
        )
    return made


def with_measures(datasets: list) -> str:  # type: ignore[type-arg]
    run = report(datasets).model_copy(update={"measures": ("mrr@10", "ndcg@10", "p@5")})
    return render_markdown(run, max_chars=None)


def test_a_passing_run_shows_one_row_per_dataset_and_collapses_the_rest() -> None:
    page = read(with_measures(three_datasets()))

    summary = table_with_header(page, "Dataset")
    ok = f"✅{NBSP}ok"
    assert summary == [
        ["Dataset", "MRR@10", "Δ", "NDCG@10", "Δ", "Status"],
        ["hybrid.jsonl", "0.800", "0.0%", "0.700", "0.0%", ok],
        ["keyword.jsonl", "0.800", "0.0%", "0.700", "0.0%", ok],
        ["semantic.jsonl", "0.800", "0.0%", "0.700", "0.0%", ok],
    ]
    # Three datasets' seven-row tables are all behind one collapsed section.
    assert page.visible_rows == 4 <= 15
    assert page.summaries[0] == "3 passing datasets: full tables"
    assert len(page.tables) > 3


def test_a_failing_dataset_comes_first_in_full_with_its_regressions_opened() -> None:
    text = with_measures(three_datasets(failing="semantic.jsonl"))
    page = read(text)

    summary = table_with_header(page, "Dataset")
    assert [row[0] for row in summary[1:]] == [
        "semantic.jsonl",  # last alphabetically, first here
        "hybrid.jsonl",
        "keyword.jsonl",
    ]
    assert summary[1][1:3] == ["0.600", "−25.0%"]
    assert summary[1][-1] == f"❌{NBSP}regressed:{NBSP}MRR@10"  # names the failing metric
    # The failing dataset's full table and its regressions are visible, before the rest.
    assert text.index("### semantic.jsonl") < text.index("<details><summary>2 passing datasets")
    regressions = table_with_header(page, "Query id")
    assert regressions[1] == [
        "t\u201107",  # a non-breaking hyphen: the id never wraps in its narrow column
        "cheap hostel in Alfama",
        "1.000 → 0.250",
        "1 → 4",
        HOSTILE_DOC.replace("@", "@\u200b"),  # shown as text, nobody pinged
    ]
    assert "img" not in page.tags
    assert page.visible_rows == 4 + 8 + 2  # summary, the failing table, its regressions
    assert "2 passing datasets: full tables" in page.summaries


def test_the_sparkline_shows_the_recorded_runs_then_this_one() -> None:
    history = {"hybrid.jsonl": {"mrr@10": (0.8, 0.9, 1.0), "ndcg@10": (0.7,)}}
    run = report([dataset([query("q1", "one")], rows=[mrr_row(0.8, 0.8), ndcg_row(0.7, 0.7)])])
    run = run.model_copy(update={"measures": ("mrr@10", "ndcg@10"), "history": history})

    page = read(render_markdown(run, max_chars=None))

    row = table_with_header(page, "Dataset")[1]
    assert row[1] == f"▁▅█▁{NBSP}0.800"  # one line: the space does not break
    assert row[3] == f"▄▄{NBSP}0.700"  # a flat series sits in the middle
    assert "up to the last 20 runs on the default branch" in page.text


def test_without_history_there_is_no_sparkline() -> None:
    page = read(with_measures(three_datasets()))
    assert table_with_header(page, "Dataset")[1][1] == "0.800"
    assert "Trend" not in page.text


@given(st.lists(st.floats(min_value=0, max_value=1), min_size=2, max_size=20))
def test_sparkline_spans_lowest_to_highest(values: list[float]) -> None:
    line = sparkline(values)
    assert len(line) == len(values)
    assert set(line) <= set(SPARK_LEVELS)
    if max(values) - min(values) > 1e-9:
        assert line[values.index(min(values))] == SPARK_LEVELS[0]
        assert line[values.index(max(values))] == SPARK_LEVELS[-1]


def test_a_single_value_draws_nothing() -> None:
    assert sparkline([0.5]) == ""
