"""The summary `retrieval-eval run` prints: the verdict, the gate's policy, one line per
dataset with the row that decided it, the five worst regressed queries, where the full
report is; coloured only when asked, and no dataset text can put a control sequence on the
user's terminal."""

from __future__ import annotations

import re
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from retrieval_eval.render.terminal import (
    WORST_QUERIES,
    baseline_resolution_lines,
    terminal_summary,
)
from retrieval_eval.results import GatePolicy, QueryMove
from tests.render.reports import dataset, mrr_row, query, report

_CONTROL = re.compile(r"[\x00-\x09\x0b-\x1f\x7f-\x9f]")  # any control character but \n


def move(query_id: str, text: str, current: float) -> QueryMove:
    return QueryMove(
        query_id=query_id,
        query=text,
        metric="mrr@10",
        baseline=1.0,
        current=current,
        rank_before=1,
        rank_after=None if current == 0 else round(1 / current),
    )


def test_the_summary_a_person_reads_before_opening_the_report() -> None:
    moves = [move(f"q{n}", f"query {n}", 1 / (n + 2)) for n in range(7)]
    moves.append(move("up", "improved", 1.5))  # not a regression
    rows = [mrr_row(0.8, 0.6, "regressed")]
    made = report([dataset([query("q0", "query 0")], rows=rows, moves=moves)])
    text = terminal_summary(
        made, report_markdown=Path("out/report.md"), color=False, hint="open it"
    )
    lines = text.splitlines()
    assert lines[0] == "Passed: fine"
    assert lines[1] == "Gate: any-metric — fail when any gated metric drops more than 5%"
    assert lines[3] == (
        "  hybrid.jsonl  hybrid      1 queries  MRR@10 0.800 → 0.600 (−25.0%)  ❌ regressed"
    )
    worst = lines[lines.index("Worst regressed queries:") + 1 :][:WORST_QUERIES]
    # Worst first: q6 fell furthest (to 1/8).
    assert [line.split()[1] for line in worst] == ["q6", "q5", "q4", "q3", "q2"]
    assert worst[0] == (
        "  hybrid.jsonl q6  'query 6'  MRR@10 1.000 → 0.125, first relevant rank 1 → 8"
    )
    assert "improved" not in text
    assert lines[-1] == "Full report: out/report.md (open it)"
    assert "\x1b[" not in text


def test_colour_only_when_asked() -> None:
    made = report([dataset([query("q0", "query 0")], rows=[mrr_row(0.8, 0.6, "regressed")])])
    painted = terminal_summary(made, report_markdown=None, color=True)
    assert painted.startswith("\x1b[32m\x1b[1mPassed: fine\x1b[0m\n")
    assert "\x1b[31m" in painted  # the regressed row in red
    assert "Full report" not in painted


@given(st.text(max_size=80), st.text(max_size=20))
def test_no_dataset_text_reaches_the_terminal_as_a_control_sequence(
    text: str, query_id: str
) -> None:
    moves = [move(query_id or "q", text, 0.5)]
    made = report([dataset([query("q", text)], rows=[mrr_row(0.8, 0.6)], moves=moves)])
    for color in (False, True):
        shown = terminal_summary(made, report_markdown=None, color=color)
        if color:
            shown = re.sub(r"\x1b\[[0-9;]*m", "", shown)  # our own colours, and only them
        assert _CONTROL.search(shown) is None
    worst = shown.splitlines()[-1]
    assert len(worst) < 200  # a long query is cut to 60 characters


def test_before_a_run_each_dataset_says_what_it_can_resolve() -> None:
    policy = GatePolicy(rule="any-metric", tolerance=0.05, headline="ndcg@10", gated=("ndcg@10",))
    assert baseline_resolution_lines(None, policy, ["notes.jsonl\x1b[2J"]) == [
        "resolution: notes.jsonl [2J: known after the first run measures it"
    ]
