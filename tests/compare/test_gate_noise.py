"""Noise told apart from signal, through `retrieval-eval run` on a scratch repository.

A 24-query set (tests/compare/noise_project.py) with a scripted command retriever:
one query losing one P@5 slot fails the default gate although its paired test says
nothing (p = 1); `significance` tells that apart from six queries losing theirs;
`max_regressed_queries` fails a change that loses an answer while every mean rises;
`repeats` scores a deliberately flaky retriever by each query's mean; a measure the
baseline never recorded is new, not corrupt; renamed query ids are not a pass.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from retrieval_eval.settings import load_settings
from tests.action.git_repo import write
from tests.compare.noise_project import QUERIES, answers, config, dataset, project_files, query_text
from tests.support.action import Run, run_cli
from tests.support.markdown import table_rows
from tests.usecases.test_shards import cli, sharded

pytestmark = pytest.mark.slow

# Six queries find their note first, eighteen at rank 6: P@5 is 6 × 0.2 / 24 = 0.05.
BASE_RANKS: dict[int, int | None] = {i: 1 if i <= 6 else 6 for i in range(1, QUERIES + 1)}
ONE_QUERY_SLIPS = {**BASE_RANKS, 1: 6}
SIX_QUERIES_SLIP = {**BASE_RANKS, **dict.fromkeys(range(1, 7), 6)}


def run(root: Path, *args: str) -> tuple[Run, dict[str, Any], str]:
    done = run_cli(root, "run", *args)
    report_dir = root / (
        args[args.index("--report-dir") + 1] if "--report-dir" in args else "retrieval-eval-report"
    )
    report = json.loads((report_dir / "report.json").read_text(encoding="utf-8"))
    return done, report, (report_dir / "report.md").read_text(encoding="utf-8")


def rows(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    [dataset_report] = report["datasets"]
    return {row["metric"]: row for row in dataset_report["rows"]}


def established(root: Path, ranks: dict[int, int | None], extra: str = "") -> None:
    write(root, project_files(ranks, extra=extra))
    done, report, _ = run(root)
    assert done.returncode == 0, done.log
    assert report["verdict"] == "baseline-established"


def test_a_one_query_drop_fails_by_default_and_the_comment_says_how_little_it_is(
    tmp_path: Path,
) -> None:
    established(tmp_path, BASE_RANKS)
    write(tmp_path, {"answers.json": answers(ONE_QUERY_SLIPS)})

    done, report, markdown = run(tmp_path)

    assert done.returncode == 1, done.log
    assert report["verdict"] == "regression"
    p_at_5 = rows(report)["p@5"]
    assert p_at_5["status"] == "regressed"
    assert p_at_5["resolution"] == pytest.approx(0.2 / QUERIES)
    assert p_at_5["p_value"] == pytest.approx(1.0)
    [summary] = table_rows(markdown, "Dataset")
    assert summary[-1] == "❌\u00a0regressed:\u00a0MRR@10,\u00a0NDCG@10,\u00a0P@5"
    [p5_row] = [r for r in table_rows(markdown, "Metric") if r[0] == "P@5"]
    # Baseline, current, Δ, Δ%, p, resolution, threshold, status.
    assert p5_row[1:] == [
        "0.050",
        "0.042",
        "−0.008",
        "−16.7%",
        "1.000",
        "1\u00a0query\u00a0=\u00a00.8\u00a0pts",
        "—",
        "❌ regressed · within 1 query",
    ]


def test_significance_passes_a_drop_its_paired_test_calls_chance_and_fails_a_real_one(
    tmp_path: Path,
) -> None:
    established(tmp_path, BASE_RANKS, extra="significance = 0.05\n")
    write(tmp_path, {"answers.json": answers(ONE_QUERY_SLIPS)})

    done, report, markdown = run(tmp_path)

    assert done.returncode == 0, done.log
    assert report["verdict"] == "passed"
    assert rows(report)["p@5"]["status"] == "within-noise"
    assert "within noise (p = 1.00)" in report["headline"]
    [summary] = table_rows(markdown, "Dataset")
    assert summary[-1] == "⚠️\u00a0within\u00a0noise:\u00a0MRR@10,\u00a0NDCG@10,\u00a0P@5"

    # Six queries slipping the same way is not chance: p = 2/2^6 < 0.05.
    write(tmp_path, {"answers.json": answers(SIX_QUERIES_SLIP)})
    done, report, _ = run(tmp_path)
    assert done.returncode == 1, done.log
    assert rows(report)["p@5"]["status"] == "regressed"
    assert rows(report)["p@5"]["p_value"] < 0.05


def test_max_regressed_queries_fails_a_lost_answer_while_every_mean_rises(
    tmp_path: Path,
) -> None:
    base = {i: 1 if i == 1 else 10 for i in range(1, QUERIES + 1)}
    change = {**base, 1: None, 2: 1, 3: 1, 4: 1}
    established(tmp_path, base)
    write(tmp_path, {"answers.json": answers(change)})
    done, report, _ = run(tmp_path)
    assert done.returncode == 0, done.log  # the default gate: the means say nothing is wrong
    assert rows(report)["mrr@10"]["status"] == "improved"
    assert report["datasets"][0]["comparison"]["lost_first_hit"] == ["q-01"]

    write(tmp_path, {"retrieval-eval.toml": config("max_regressed_queries = 0\n")})
    done, report, markdown = run(tmp_path)

    assert done.returncode == 1, done.log
    assert report["verdict"] == "regression"
    assert report["headline"].startswith(
        "Regression: keyword.jsonl 1 query lost every relevant hit (max_regressed_queries = 0)"
    )
    assert "❌ **1 query lost every relevant hit (max_regressed_queries = 0)**: q-01." in markdown


def test_renaming_every_query_id_is_not_a_pass(tmp_path: Path) -> None:
    established(tmp_path, BASE_RANKS)
    write(tmp_path, {"datasets/keyword.jsonl": dataset(ids="renamed")})

    done, report, markdown = run(tmp_path)

    assert done.returncode == 1, done.log
    assert report["verdict"] == "regression"
    assert report["headline"] == (
        "Regression: keyword.jsonl 24 of 24 baselined queries missing "
        "(at most 12 may be removed or renamed in one run)"
    )
    [summary] = table_rows(markdown, "Dataset")
    assert summary[-1] == "❌\u00a024\u00a0of\u00a024\u00a0queries\u00a0removed"


def test_a_measure_the_baseline_never_recorded_is_new_then_established(tmp_path: Path) -> None:
    established(tmp_path, BASE_RANKS)
    before = json.loads((tmp_path / "baseline.json").read_text(encoding="utf-8"))
    measures = 'measures = ["mrr@10", "ndcg@10", "p@5", "recall@10", "map"]\n'
    write(tmp_path, {"retrieval-eval.toml": config(measures)})

    done, report, _ = run(tmp_path)

    assert done.returncode == 0, done.log
    assert report["verdict"] == "passed"
    assert rows(report)["map"]["status"] == "new"
    after = json.loads((tmp_path / "baseline.json").read_text(encoding="utf-8"))
    entry, old = after["datasets"]["keyword.jsonl"], before["datasets"]["keyword.jsonl"]
    assert entry["aggregates"]["map"] == pytest.approx(0.375)
    assert {k: v for k, v in entry["aggregates"].items() if k != "map"} == old["aggregates"]
    assert "map" in entry["measures"]
    # The next run compares it like any other.
    done, report, _ = run(tmp_path)
    assert done.returncode == 0, done.log
    assert rows(report)["map"]["status"] == "ok"


def test_repeats_score_a_flaky_retriever_by_each_querys_mean(tmp_path: Path) -> None:
    """The retriever swaps its first two results at random (seeded); each query has its
    note first, so every swap turns its reciprocal rank from 1 into 0.5."""
    write(tmp_path, project_files({i: 2 for i in range(1, QUERIES + 1)}, extra="repeats = 4\n"))
    # Rank 2 behind one filler: a swap puts the note first.
    write(tmp_path, {"flaky.json": json.dumps({"seed": 7, "swap": 0.5})})

    done, report, markdown = run(tmp_path)

    assert done.returncode == 0, done.log
    [measured] = report["datasets"]
    searched = (tmp_path / "searches.log").read_text(encoding="utf-8").splitlines()
    assert searched.count(query_text(2)) == 4
    values = {q["metrics"]["mrr@10"] for q in measured["queries"]}
    assert values - {1.0, 0.5} and values <= {0.5, 0.625, 0.75, 0.875, 1.0}
    # The first relevant rank is the median of the repeats' (the lower one of a tie): the
    # note first in at least two of the four searches (MRR ≥ 0.75) is at rank 1.
    for query in measured["queries"]:
        expected = 1 if query["metrics"]["mrr@10"] >= 0.75 else 2
        assert query["first_relevant_rank"] == expected, query["query_id"]
    spread = measured["repeats"]
    assert spread["runs"] == 4
    assert len(spread["means"]["mrr@10"]) == 4
    mean_of_repeats = sum(spread["means"]["mrr@10"]) / 4
    assert measured["aggregates"]["mrr@10"]["value"] == pytest.approx(mean_of_repeats)
    assert spread["varied"]["mrr@10"] > 0
    assert "🔁 Each query was searched 4 times and scored by its mean" in markdown
    [mrr] = [r for r in table_rows(markdown, "Metric | Mean in each repeat") if r[0] == "MRR@10"]
    assert mrr[1] == " · ".join(f"{v:.3f}" for v in spread["means"]["mrr@10"])


@pytest.mark.parametrize(("repeats", "verdict"), [(1, "regression"), (8, "passed")])
def test_repeats_tell_a_flaky_retriever_apart_from_a_regression(
    tmp_path: Path, repeats: int, verdict: str
) -> None:
    """The same flaky system twice, with two seeds: searched once per query its MRR@10
    reads 0.771 then 0.708 (−8.1%, a regression that is only chance); searched eight
    times, 0.747 both times."""
    flaky = {i: 2 for i in range(1, QUERIES + 1)}
    write(tmp_path, project_files(flaky, extra=f"repeats = {repeats}\n"))
    write(tmp_path, {"flaky.json": json.dumps({"seed": 1, "swap": 0.5})})
    done, _, _ = run(tmp_path)
    assert done.returncode == 0, done.log
    write(tmp_path, {"flaky.json": json.dumps({"seed": 11, "swap": 0.5})})

    done, report, _ = run(tmp_path)

    assert report["verdict"] == verdict, done.log
    mrr = rows(report)["mrr@10"]
    if repeats == 1:
        assert (mrr["baseline"], mrr["current"]) == pytest.approx((0.7708, 0.7083), abs=1e-4)
    else:
        assert (mrr["baseline"], mrr["current"]) == pytest.approx((0.7474, 0.7474), abs=1e-4)
        means = report["datasets"][0]["repeats"]["means"]["mrr@10"]
        assert max(means) - min(means) > abs(mrr["delta"])  # the spread dwarfs the change


def test_sharded_repeats_merge_to_the_unsharded_spread(tmp_path: Path) -> None:
    write(tmp_path, project_files(BASE_RANKS, extra="repeats = 3\n"))
    whole, report, _ = run(tmp_path, "--report-dir", "whole")
    assert whole.returncode == 0, whole.log
    folders = sharded(tmp_path, 2)

    merged = cli(tmp_path, "merge", "--quiet", "--report-dir", "merged", *map(str, folders))

    assert merged.returncode == 0, merged.stderr
    combined = json.loads((tmp_path / "merged" / "report.json").read_text(encoding="utf-8"))
    expected = report["datasets"][0]["repeats"]
    spread = combined["datasets"][0]["repeats"]
    assert spread["runs"] == 3 and spread["varied"] == expected["varied"]
    for metric, means in expected["means"].items():
        assert spread["means"][metric] == pytest.approx(means), metric


def test_init_leaves_the_measured_default_rule_on_with_its_error_rates_in_comments(
    tmp_path: Path,
) -> None:
    (tmp_path / "notes").mkdir()
    for name in ("a.md", "b.md", "c.md"):
        (tmp_path / "notes" / name).write_text("# Note\n\ntext\n", encoding="utf-8")

    done = run_cli(tmp_path, "init")

    assert done.returncode == 0, done.log
    text = (tmp_path / "retrieval-eval.toml").read_text(encoding="utf-8")
    # significance = 0.05 with max_regressed_queries = 2 passed most real 5-10% drops.
    assert "\nsignificance" not in text and "\nmax_regressed_queries" not in text
    assert "pass 12-13% of true 5-10% drops and fail 10% of changes up to 5% better" in text
    assert "With 20 queries a file it catches a drop of about 9% four times in five" in text
    settings = load_settings(workdir=tmp_path, config_file=None, overrides={})
    assert (settings.significance, settings.max_regressed_queries) == (None, None)
    assert settings.gate_rule == "headline-pooled"
