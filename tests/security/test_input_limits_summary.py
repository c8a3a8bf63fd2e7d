"""Threat: a pull request big enough that its report outgrows the job summary. The runner
refuses a step's summary over 1 MiB, counted in bytes, and then shows none of it; a CJK
character is three bytes. The summary is shortened to fit, and says so."""

from __future__ import annotations

import json

import pytest

from tests.action.project import fixture_lines
from tests.security.harness import Repo

pytestmark = pytest.mark.slow

RUNNER_SUMMARY_LIMIT = 1024 * 1024  # bytes


def cjk_fixture(number: int) -> str:
    query = "".join(chr(0x4E00 + (number * 131 + i * 7) % 20_000) for i in range(120))
    fixture = {
        "query_id": f"z-{number:05d}",
        "query": query,
        "retrieval_type": "keyword",
        "expected_top_k_ids": ["recipes/shakshuka"],
        "ground_truth_source": "human-annotated",
    }
    return json.dumps(fixture, ensure_ascii=False) + "\n"


def test_a_report_of_many_cjk_queries_still_fits_the_job_summary(repo: Repo) -> None:
    main = repo.establish_baseline()
    repo.branch("many", main)
    dataset = fixture_lines() + "".join(cjk_fixture(n) for n in range(4_000))
    head = repo.commit({"datasets/keyword.jsonl": dataset}, "4,000 new queries in Chinese")

    run = repo.pull_request(40, main, head)

    assert run.returncode == 0, run.log
    assert run.outputs["verdict"] == "passed"
    assert len(run.summary.encode("utf-8")) <= RUNNER_SUMMARY_LIMIT
    assert "Passed" in run.summary.split("\n", 1)[0]
    assert "left out" in run.summary
