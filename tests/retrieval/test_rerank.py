"""The hybrid's rerank stage, through `retrieval-eval beir --config` as a user runs it.

Claude is the loopback Messages API server (tests/support/fake_anthropic.py)
reached by the real ``anthropic`` client; custom rerankers are a real factory
and a real child process.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.retrieval.rerank.beir_project import (
    CLI,
    QUERIES,
    REPO_ROOT,
    beir,
    beir_dir,
    config_file,
)
from tests.support.fake_anthropic import FakeAnthropic

__all__ = ["beir_dir"]  # a fixture, used by name


def _reverse_all(body: dict[str, Any]) -> tuple[int, str]:
    prompt = body["messages"][0]["content"]
    count = int(re.search(r"and (\d+) numbered passages", prompt).group(1))  # type: ignore[union-attr]
    return 200, json.dumps({"ranking": list(range(count, 0, -1))})


@pytest.mark.slow
def test_claude_reorders_the_fused_top_and_is_priced_and_cached(
    beir_dir: Path, tmp_path: Path
) -> None:
    _, fused, plain = beir(beir_dir, tmp_path, None, name="plain")
    with FakeAnthropic(responder=_reverse_all) as fake:
        config = config_file(
            tmp_path,
            f'reranker = "claude"\nrerank_depth = 3\n[retrievers.hybrid.claude]\n'
            f'base_url = "{fake.base_url}"\nmodel = "claude-test"\n'
            f"input_usd_per_mtok = 2.0\noutput_usd_per_mtok = 10.0\n"
            f'cache_dir = "{tmp_path / "rerank-cache"}"\n',
        )
        done, reranked, summary = beir(beir_dir, tmp_path, config, key="test-key")
        assert done.returncode == 0, done.stderr
        first_requests = len(fake.requests)
        again, reranked_again, summary_again = beir(beir_dir, tmp_path, config, key="test-key")
        assert again.returncode == 0, again.stderr

    for qid, order in fused.items():
        assert reranked[qid] == order[:3][::-1] + order[3:]
    # One call per query (the warm-up query repeats the first and is answered from the cache).
    assert first_requests == len(QUERIES)
    request = fake.requests[0].body
    assert request["model"] == "claude-test"
    assert "Query: wing flutter" in request["messages"][0]["content"]
    # The fake reports 1,200 input and 8 output tokens per call.
    assert summary["cost_per_query_usd"] == pytest.approx((1200 * 2.0 + 8 * 10.0) / 1e6)
    assert summary["rerank_p50_ms"] is not None and "rerank_p50_ms" not in plain
    assert summary["config"]["reranker"]["model"] == "claude-test"
    # The re-run makes no API call, and reports the same rankings and cost.
    assert len(fake.requests) == first_requests
    assert reranked_again == reranked
    assert summary_again["cost_per_query_usd"] == summary["cost_per_query_usd"]


@pytest.mark.parametrize(
    ("reply", "problem"),
    [
        pytest.param("Passage 2 is best.", "expected", marks=pytest.mark.slow),
        pytest.param('{"ranking": [1, 1, 2]}', "exactly once", marks=pytest.mark.slow),
        ('{"ranking": [1, 2]}', "exactly once"),
        pytest.param('{"ranking": ["1", 2, 3]}', "passage numbers only", marks=pytest.mark.slow),
    ],
)
def test_a_malformed_claude_answer_fails_the_run_loudly(
    beir_dir: Path, tmp_path: Path, reply: str, problem: str
) -> None:
    with FakeAnthropic(responder=lambda body: (200, reply)) as fake:
        config = config_file(
            tmp_path,
            f'reranker = "claude"\nrerank_depth = 3\n'
            f'[retrievers.hybrid.claude]\nbase_url = "{fake.base_url}"\n',
        )
        done, _, _ = beir(beir_dir, tmp_path, config, key="test-key")
    assert done.returncode == 2
    assert "reranker's reply for query 'wing flutter' is malformed" in done.stderr
    assert problem in done.stderr


@pytest.mark.slow
def test_an_api_error_fails_the_run(beir_dir: Path, tmp_path: Path) -> None:
    with FakeAnthropic(responder=lambda body: (400, "bad request")) as fake:
        config = config_file(
            tmp_path,
            f'reranker = "claude"\n[retrievers.hybrid.claude]\nbase_url = "{fake.base_url}"\n',
        )
        done, _, _ = beir(beir_dir, tmp_path, config, key="test-key")
    assert done.returncode == 2
    assert "failed with HTTP 400" in done.stderr


@pytest.mark.slow
def test_run_reports_the_rerank_stage_and_its_cost(tmp_path: Path) -> None:
    """`retrieval-eval run` on this repository's datasets with a custom reranker."""
    # Paths in a configuration must stay inside the project, so the project is a copy.
    shutil.copytree(REPO_ROOT / "datasets", tmp_path / "datasets")
    config = tmp_path / "retrieval-eval.toml"
    config.write_text(
        'datasets = "datasets"\ncorpus = "datasets/corpus"\n'
        '[thresholds]\n"p@5" = false\n'
        '[retrievers.hybrid]\nreranker = "custom"\nrerank_depth = 5\n'
        '[retrievers.hybrid.custom]\npython = "tests.retrieval.own_reranker:make"\n'
        "options = { cost = 0.0004 }\n"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    report_dir = tmp_path / "report"
    done = subprocess.run(
        [
            str(CLI),
            "run",
            "--config",
            str(config),
            "--baseline",
            str(tmp_path / "b.json"),
            "--report-dir",
            str(report_dir),
            "--cache-dir",
            str(tmp_path / "cache"),
            "--no-progress",
            "--quiet",
        ],
        capture_output=True,
        text=True,
        check=False,
        env=env,
        cwd=tmp_path,
    )
    assert done.returncode in (0, 1), done.stderr
    report = json.loads((report_dir / "report.json").read_text())
    by_name = {d["name"]: d for d in report["datasets"]}
    hybrid = by_name["hybrid.jsonl"]
    assert hybrid["rerank_latency"]["count"] == hybrid["latency"]["count"]
    assert hybrid["rerank_latency"]["p50_ms"] <= hybrid["latency"]["p50_ms"]
    # A query whose tag filter matches nothing has no candidates: nothing to rerank or pay.
    reranked = [q for q in hybrid["queries"] if q["retrieved"]]
    assert 0 < len(reranked) < len(hybrid["queries"])
    assert hybrid["cost_per_query_usd"] == pytest.approx(
        0.0004 * len(reranked) / len(hybrid["queries"])
    )
    assert hybrid["retriever_config"]["reranker"]["python"] == "tests.retrieval.own_reranker:make"
    # Ids descending within the top 5: the reranker's order, not the fusion's.
    for query in hybrid["queries"]:
        top = query["retrieved"][:5]
        assert top == sorted(top, reverse=True)
    assert by_name["semantic.jsonl"]["rerank_latency"] is None
    assert "The rerank stage alone" in (report_dir / "report.md").read_text()
