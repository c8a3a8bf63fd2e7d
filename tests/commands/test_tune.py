"""`retrieval-eval tune` through the console script: the search, the cross-validated
choice and the table to paste on stdout, every point in --json, the flags (--retriever,
--param, --folds, --seed, --metric) reaching the search, an invalid dataset as exit 1 with
its problems, and bad flags as errors naming them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.author.cli import retrieval_eval
from tests.compare.conftest import Project

GRID = ("--retriever", "bm25", "--param", "k1=0.9,1.5", "--folds", "2")


def test_it_prints_the_choice_and_the_table_and_writes_every_point(tmp_path: Path) -> None:
    Project(tmp_path)

    done = retrieval_eval(
        "tune", "datasets/keyword.jsonl", *GRID, "--seed", "3", "--metric", "mrr@10",
        "--json", "tune.json",
        cwd=tmp_path,
    )  # fmt: skip

    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == (
        "tune bm25 on datasets/keyword.jsonl: 11 judged queries, 2 grid points, mrr@10, "
        "2 folds (seed 3)"
    )
    assert [line.split()[0] for line in lines if line.startswith("  fold ")] == ["fold"] * 2
    assert any(line.startswith("in-sample best ") for line in lines)
    assert any(line.startswith("cross-validated ") for line in lines)
    table = done.stdout.split("Paste into retrieval-eval.toml:\n\n")[1]
    assert table.startswith("[retrievers.bm25]\nk1 = ")
    summary = json.loads((tmp_path / "tune.json").read_text(encoding="utf-8"))
    assert (summary["retriever"], summary["metric"], summary["folds"], summary["seed"]) == (
        "bm25",
        "mrr@10",
        2,
        3,
    )
    assert len(summary["points"]) == 2


def test_an_invalid_dataset_exits_1_with_its_problems(tmp_path: Path) -> None:
    Project(tmp_path)
    (tmp_path / "bad.jsonl").write_text('{"query_id": "x"}\n', encoding="utf-8")

    done = retrieval_eval("tune", "bad.jsonl", *GRID, cwd=tmp_path)

    assert done.returncode == 1
    assert "bad.jsonl:1: missing required field 'query'" in done.stderr
    assert "Paste into" not in done.stdout


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (("--retriever", "bm25"), "Missing option '--param'"),
        (("--param", "zz=1,2", "--retriever", "bm25"), "--param 'zz=1,2': expected NAME=VALUES"),
        ((*GRID, "--metric", "nope"), "unknown measure 'nope'"),
        (
            ("--retriever", "bm25", "--param", "k1=1,2", "--folds", "1"),
            "Invalid value for '--folds'",
        ),
    ],
    ids=["no-param", "unknown-param", "unknown-metric", "one-fold"],
)
def test_bad_flags_are_errors_naming_them(
    tmp_path: Path, flags: tuple[str, ...], message: str
) -> None:
    Project(tmp_path)

    done = retrieval_eval("tune", "datasets/keyword.jsonl", *flags, cwd=tmp_path)

    assert done.returncode == 2
    assert message in done.stderr
    assert done.stdout == ""
