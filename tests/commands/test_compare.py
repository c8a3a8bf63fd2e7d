"""`retrieval-eval compare`'s own part: the sides it is given, and the settings flags the
option table declares for it (the comparison itself: tests/usecases/test_compare.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.action import run_cli


def test_an_unknown_side_is_a_usage_error(tmp_path: Path) -> None:
    run = run_cli(tmp_path, "compare", "--retriever", "bm25", "--retriever", "bm26")
    assert run.returncode == 2
    assert "Usage: retrieval-eval compare" in run.stderr
    assert "unknown side 'bm26'; choose a retriever or a challenger: dense, bm25" in run.stderr


@pytest.mark.parametrize(
    ("sides", "message"),
    [
        (["bm25"], "give --retriever at least twice: the reference and a challenger"),
        (["bm25", "bm25"], "each --retriever names a different side"),
    ],
)
def test_the_sides_are_two_or_more_different_ones(
    tmp_path: Path, sides: list[str], message: str
) -> None:
    args = [arg for side in sides for arg in ("--retriever", side)]
    run = run_cli(tmp_path, "compare", *args)
    assert run.returncode == 2
    assert message in run.stderr


def test_k_is_a_setting_the_configuration_file_gives_and_the_flag_overrides(
    tmp_path: Path,
) -> None:
    """`--k` and `[k]` are one setting: the flag's help is the option table's, and a bad
    value is refused as the setting's bounds say."""
    helped = run_cli(tmp_path, "compare", "--help")
    assert "Results retrieved per query. Default: k in the config file, else 10." in " ".join(
        helped.stdout.split()
    )
    bad = run_cli(tmp_path, "compare", "--retriever", "bm25", "--retriever", "like", "--k", "0")
    assert bad.returncode == 2, bad.log
    assert "k" in bad.stderr and "greater than or equal to 1" in bad.stderr, bad.log
