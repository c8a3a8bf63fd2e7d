"""A dataset problem: ``FILE:LINE: message`` for the terminal, and a workflow command that
shows it on the pull request's diff, which no message can end early or redirect."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from retrieval_eval.validate.problems import Problem


def test_a_problem_reads_file_line_message() -> None:
    problem = Problem(Path("datasets/golden.jsonl"), 12, "unknown doc id 'd9'")
    assert str(problem) == "datasets/golden.jsonl:12: unknown doc id 'd9'"


def test_the_annotation_points_at_the_line() -> None:
    problem = Problem(Path("datasets/golden.jsonl"), 12, "unknown doc id 'd9'")
    assert problem.github_annotation() == (
        "::error file=datasets/golden.jsonl,line=12::unknown doc id 'd9'"
    )


def test_a_newline_or_a_comma_in_the_message_or_the_name_is_escaped() -> None:
    problem = Problem(Path("a,b:c.jsonl"), 3, "bad\n::warning::forged 100%")
    assert problem.github_annotation() == (
        "::error file=a%2Cb%3Ac.jsonl,line=3::bad%0A::warning::forged 100%25"
    )


@given(st.text(), st.text(min_size=1), st.integers(min_value=1))
def test_any_message_stays_one_command_and_round_trips(name: str, message: str, line: int) -> None:
    command = Problem(Path(name or "x"), line, message).github_annotation()
    assert "\n" not in command and "\r" not in command
    head, _, data = command.partition("::")[2].partition("::")
    assert head.startswith("error file=") and head.endswith(f",line={line}")
    unescaped = data.replace("%0A", "\n").replace("%0D", "\r").replace("%25", "%")
    assert unescaped == message
