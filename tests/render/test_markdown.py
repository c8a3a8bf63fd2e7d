"""report.md as GitHub renders it: the tables' cells, the sections, the limits."""

from __future__ import annotations

from pathlib import Path

from retrieval_eval.action.comment import MAX_COMMENT_CHARS
from retrieval_eval.render.escape import escape_markdown
from retrieval_eval.render.markdown import render_markdown
from retrieval_eval.results import BreakdownRow, QueryMove
from tests.render.github_html import read, table_with_header, to_html
from tests.render.reports import dataset, mrr_row, query, report

HOSTILE = "a | b `code` <script>alert(1)</script> @here @org/team **bold** [x](http://e.vil) \\"


def test_metric_table_cells() -> None:
    text = render_markdown(
        report([dataset([query("q1", "one")], rows=[mrr_row(0.8, 0.76)])]), max_chars=None
    )
    table = table_with_header(read(text), "Metric")
    assert table[0] == [
        "Metric",
        "Baseline",
        "Current",
        "Δ",
        "Δ%",
        "p",
        "Resolution",
        "Threshold",
        "Status",
    ]
    assert table[1] == ["MRR@10", "0.800", "0.760", "−0.040", "−5.0%", "—", "—", "≥ 0.75", "✅ ok"]


def test_first_line_is_the_verdict_with_its_numbers() -> None:
    headline = "Regression: hybrid.jsonl MRR@10 0.800 → 0.700 (−12.5%) (tolerance 5%)"
    text = render_markdown(
        report([dataset([query("q1", "one")])], headline=headline), max_chars=None
    )
    assert text.splitlines()[0] == f"✅ **{escape_markdown(headline, max_len=None)}**"
    assert read(text.splitlines()[0]).text.strip() == f"✅ {headline}"


def test_sections_are_collapsible_details() -> None:
    move = QueryMove(
        query_id="q1",
        query="lemon tart",
        metric="mrr@10",
        baseline=1.0,
        current=0.5,
        rank_before=1,
        rank_after=2,
        top_after="doc-b",
    )
    breakdown = BreakdownRow(dimension="tag", group="recipes", n=1, metrics={"mrr@10": 0.5})
    text = render_markdown(
        report(
            [
                dataset(
                    # Two queries: a group holding every query would repeat the dataset's row.
                    [query("q1", "lemon tart", rank=2), query("q2", "pear tart", rank=1)],
                    rows=[mrr_row(1.0, 0.5, "regressed")],
                    moves=[move],
                    breakdowns=[breakdown],
                    added=["q9"],
                    removed=["q0"],
                )
            ]
        ),
        max_chars=None,
    )
    page = read(text)
    # A regressed dataset shows its regressions opened; everything else stays collapsed.
    assert page.summaries == [
        "New and removed queries (1 new, 1 removed)",
        "Paired test on the common queries: noise or signal?",
        "Breakdown by query type and tag",
        "Latency and cost",
        "Environment",
    ]
    moved = table_with_header(page, "Query id")
    assert moved[0] == [
        "Query id",
        "Query",
        "MRR@10 before → after",
        "First relevant rank",
        "Ranked first now",
    ]
    assert moved[1] == ["q1", "lemon tart", "1.000 → 0.500", "1 → 2", "doc-b"]
    assert "Queries that regressed (1), worst first:" in page.text
    paired = next(t for t in page.tables if t[0][1] == "Queries")
    assert paired == [
        ["Metric", "Queries", "Mean Δ", "95% CI", "p-value"],
        ["MRR@10", "2", "−0.050", "[−0.120, +0.010]", "0.200"],
    ]
    assert ["tag: recipes", "1", "0.500"] in table_with_header(page, "Group")
    assert "timings on shared CI runners vary between identical runs" in page.text
    assert "mermaid" not in text  # the summary table carries baseline, current and Δ


def test_hostile_query_text_cannot_break_a_table_or_ping_anyone() -> None:
    move = QueryMove(
        query_id="id|`x`",
        query=HOSTILE,
        metric="mrr@10",
        baseline=1.0,
        current=0.5,
        rank_before=1,
        rank_after=2,
    )
    text = render_markdown(
        report([dataset([query("id|`x`", HOSTILE, rank=2)], moves=[move])]), max_chars=None
    )
    page = read(text)
    assert "script" not in page.tags
    assert "<script>" not in to_html(text)
    row = table_with_header(page, "Query id")[1]
    assert len(row) == 5  # the pipe did not split the cell
    assert row[0] == "id|`x`"
    # Shown verbatim (no bold, no link text, no code span), with the mentions defused.
    assert row[1] == HOSTILE.replace(" @", " @\u200b")
    assert "@here" not in page.text and "@org/team" not in page.text


def test_ten_thousand_queries_fit_a_comment_with_truncation_notes() -> None:
    queries = [query(f"q{i}", f"{HOSTILE} {i}", rank=2) for i in range(10_000)]
    moves = [
        QueryMove(
            query_id=f"q{i}",
            query=f"{HOSTILE} {i}",
            metric="mrr@10",
            baseline=1.0,
            current=0.5,
            rank_before=1,
            rank_after=2,
        )
        for i in range(10_000)
    ]
    breakdowns = [
        BreakdownRow(dimension="tag", group=f"tag-{i}", n=1, metrics={"mrr@10": 0.5})
        for i in range(3_000)
    ]
    full_report = report(
        [
            dataset(
                queries, moves=moves, breakdowns=breakdowns, added=[f"q{i}" for i in range(5_000)]
            )
        ]
    )
    full = render_markdown(full_report, max_chars=None)
    capped = render_markdown(full_report, max_chars=MAX_COMMENT_CHARS - 200)
    assert len(full) > MAX_COMMENT_CHARS  # the file keeps everything
    assert len(capped) <= MAX_COMMENT_CHARS - 200
    page = read(capped)
    moved = table_with_header(page, "Query id")
    assert len(moved) - 1 == 25
    assert "9,975 rows left out; the full list is in report.md." in page.text
    assert "some rows were left out to fit a comment; the full report is report.md" in page.text
    assert "script" not in page.tags


def test_notices_are_shown_before_the_tables() -> None:
    text = render_markdown(
        report([dataset([query("q1", "one")])]),
        max_chars=None,
        notices=["This pull request changes baseline.json; the base branch's baseline was used."],
    )
    lines = text.splitlines()
    assert lines[2] == "> [!WARNING]"
    assert (
        lines[3]
        == "> This pull request changes baseline.json; the base branch's baseline was used."
    )


def test_too_many_datasets_are_cut_at_a_line_with_details_closed() -> None:
    datasets = [
        dataset([query(f"q{i}", "text")], rows=[mrr_row(0.8, 0.8)], name=f"set-{i}.jsonl")
        for i in range(400)
    ]
    capped = render_markdown(report(datasets), max_chars=20_000)
    assert len(capped) <= 20_000
    assert capped.count("<details>") == capped.count("</details>")
    assert capped.count("```") % 2 == 0
    assert capped.endswith(
        "_The rest of this report was left out to fit a comment; the full report is report.md._\n"
    )


GOLDEN = Path(__file__).with_name("golden_regression.md")


def test_whole_rendered_text() -> None:
    """The complete comment for a one-query regression, byte for byte."""
    headline = "Regression: hybrid.jsonl MRR@10 1.000 → 0.500 (−50.0%) (tolerance 5%)"
    regressed = report(
        [dataset([query("q1", "lemon tart", rank=2)], rows=[mrr_row(1.0, 0.5, "regressed")])],
        headline=headline,
    ).model_copy(update={"verdict": "regression"})
    assert render_markdown(regressed, max_chars=None) == GOLDEN.read_text(encoding="utf-8")


def test_a_heading_counts_the_queries_compared_when_some_are_new() -> None:
    from retrieval_eval.render.filters import query_count

    queries = [query(f"q{i}", "eggs") for i in range(27)]
    one = dataset(queries, rows=[mrr_row(0.8, 0.8)], added=("q24", "q25", "q26"))
    one = one.model_copy(
        update={"comparison": one.comparison.model_copy(update={"common_queries": 24})}  # type: ignore[union-attr]
    )
    assert query_count(one) == "24 of 27 queries compared"
    text = render_markdown(report([one]), max_chars=None)
    assert "### hybrid.jsonl · hybrid · 24 of 27 queries compared · " in text
    same = dataset(queries, rows=[mrr_row(0.8, 0.8)])
    assert query_count(same) == "27 queries"


def test_passing_datasets_fold_their_explanations_into_one_line() -> None:
    """Inside the fold of passing datasets the notes every table shares are said once, and a
    breakdown whose one group holds every query (it repeats the dataset's row) is left out."""
    one_group = BreakdownRow(dimension="retrieval_type", group="hybrid", n=1, metrics={})
    passing = [
        dataset(
            [query("q1", "lemon tart", rank=1)], rows=[mrr_row(1.0, 1.0, "ok")], name=name
        ).model_copy(update={"breakdowns": (one_group,)})
        for name in ("hybrid.jsonl", "keyword.jsonl", "semantic.jsonl")
    ]
    text = render_markdown(report(passing), max_chars=None)

    fold = text.split("<details><summary>3 passing datasets: full tables</summary>")[1]
    assert fold.count("p: the paired randomization test") == 1
    assert fold.count("Current minus baseline, per query") == 1
    assert "Breakdown by query type and tag" not in fold
