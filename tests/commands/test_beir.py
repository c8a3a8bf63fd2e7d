"""`retrieval-eval beir DIR` through the console script: the table of numbers on stdout,
the JSON summary and the TREC run where --json and --run say, the flags (--split, --k,
--config) reaching the evaluation, and bad flags as errors naming them."""

from __future__ import annotations

import json
from pathlib import Path

from tests.author.cli import retrieval_eval


def test_it_prints_the_table_and_writes_the_summary_and_run(
    tmp_path: Path, beir_folder: Path
) -> None:
    done = retrieval_eval(
        "beir", "mini", "--k", "1", "--json", "out/s.json", "--run", "out/run.txt", cwd=tmp_path
    )

    assert done.returncode == 0, done.stderr
    rows = dict(line.split(None, 1) for line in done.stdout.splitlines())
    assert rows["retriever"] == "bm25"
    assert rows["queries"] == "3 (documents: 2)"
    assert rows["ndcg@10"] == "1.0000"
    summary = json.loads((tmp_path / "out" / "s.json").read_text(encoding="utf-8"))
    assert (summary["split"], summary["k"], summary["num_queries"]) == ("test", 1, 3)
    run = (tmp_path / "out" / "run.txt").read_text(encoding="utf-8").splitlines()
    # --k 1: one line a query that finds anything ("nothing" matches no document).
    assert [line.split()[:4] for line in run] == [["q1", "Q0", "d1", "1"], ["q2", "Q0", "d2", "1"]]


def test_split_and_config_reach_the_evaluation(tmp_path: Path, beir_folder: Path) -> None:
    (tmp_path / "tuned.toml").write_text("[retrievers.bm25]\nk1 = 0.9\n", encoding="utf-8")

    done = retrieval_eval(
        "beir", "mini", "--split", "dev", "--config", "tuned.toml", "--json", "s.json",
        cwd=tmp_path,
    )  # fmt: skip

    assert done.returncode == 0, done.stderr
    summary = json.loads((tmp_path / "s.json").read_text(encoding="utf-8"))
    assert (summary["split"], summary["num_queries"]) == ("dev", 1)
    assert summary["config"]["k1"] == 0.9


def test_bad_flags_are_errors_naming_them(tmp_path: Path, beir_folder: Path) -> None:
    zero = retrieval_eval("beir", "mini", "--k", "0", cwd=tmp_path)
    unconfigured = retrieval_eval("beir", "mini", "--retriever", "custom", cwd=tmp_path)
    absent = retrieval_eval("beir", "nowhere", cwd=tmp_path)

    assert zero.returncode == 2
    assert "Invalid value for '--k'" in zero.stderr
    assert unconfigured.returncode == 2
    assert "retriever `custom` needs a [retrievers.custom] table" in unconfigured.stderr
    assert absent.returncode == 2
    assert "Directory 'nowhere' does not exist" in absent.stderr
    assert zero.stdout == unconfigured.stdout == ""
