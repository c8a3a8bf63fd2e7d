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
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest

from tests.support.fake_anthropic import FakeAnthropic

REPO_ROOT = Path(__file__).resolve().parents[2]
CLI = Path(sys.executable).parent / "retrieval-eval"

CORPUS = [
    {"_id": "d1", "title": "Wing flutter", "text": "flutter of a swept wing at high speed"},
    {"_id": "d2", "title": "Flutter tests", "text": "wind tunnel flutter tests of a wing"},
    {"_id": "d3", "title": "Wing loads", "text": "loads on a wing in gusts"},
    {"_id": "d4", "title": "Buckling", "text": "buckling of thin cylindrical shells"},
]
QUERIES = [{"_id": "q1", "text": "wing flutter"}, {"_id": "q2", "text": "shells buckling"}]
QRELS = "query-id\tcorpus-id\tscore\nq1\td1\t2\nq1\td2\t1\nq2\td4\t1\n"


@pytest.fixture
def beir_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "tiny"
    (folder / "qrels").mkdir(parents=True)
    (folder / "corpus.jsonl").write_text("".join(json.dumps(d) + "\n" for d in CORPUS))
    (folder / "queries.jsonl").write_text("".join(json.dumps(q) + "\n" for q in QUERIES))
    (folder / "qrels" / "test.tsv").write_text(QRELS)
    return folder


def _config(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "retrieval-eval.toml"
    path.write_text("[retrievers.hybrid]\n" + body)
    return path


def _beir(
    beir_dir: Path, tmp_path: Path, config: Path | None, key: str | None = None, name: str = "r"
) -> tuple[subprocess.CompletedProcess[str], dict[str, list[str]], dict[str, Any]]:
    run, summary = tmp_path / f"{name}.run", tmp_path / f"{name}.json"
    env = {k: v for k, v in os.environ.items() if k != "ANTHROPIC_API_KEY"}
    if key is not None:
        env["ANTHROPIC_API_KEY"] = key
    env["PYTHONPATH"] = str(REPO_ROOT)  # where the user's factory module lives
    args = [str(CLI), "beir", str(beir_dir), "--retriever", "hybrid", "--k", "4"]
    args += ["--run", str(run), "--json", str(summary)]
    # A cache of its own each time: every call asks the reranker afresh.
    args += ["--cache-dir", tempfile.mkdtemp(dir=tmp_path)]
    if config is not None:
        args += ["--config", str(config)]
    done = subprocess.run(args, capture_output=True, text=True, check=False, env=env, cwd=REPO_ROOT)
    if done.returncode != 0:
        return done, {}, {}
    rankings: dict[str, list[str]] = {}
    for line in run.read_text().splitlines():
        qid, _, doc_id, *_ = line.split()
        rankings.setdefault(qid, []).append(doc_id)
    return done, rankings, json.loads(summary.read_text())


def _reverse_all(body: dict[str, Any]) -> tuple[int, str]:
    prompt = body["messages"][0]["content"]
    count = int(re.search(r"and (\d+) numbered passages", prompt).group(1))  # type: ignore[union-attr]
    return 200, json.dumps({"ranking": list(range(count, 0, -1))})


@pytest.mark.slow
def test_claude_reorders_the_fused_top_and_is_priced_and_cached(
    beir_dir: Path, tmp_path: Path
) -> None:
    _, fused, plain = _beir(beir_dir, tmp_path, None, name="plain")
    with FakeAnthropic(responder=_reverse_all) as fake:
        config = _config(
            tmp_path,
            f'reranker = "claude"\nrerank_depth = 3\n[retrievers.hybrid.claude]\n'
            f'base_url = "{fake.base_url}"\nmodel = "claude-test"\n'
            f"input_usd_per_mtok = 2.0\noutput_usd_per_mtok = 10.0\n"
            f'cache_dir = "{tmp_path / "rerank-cache"}"\n',
        )
        done, reranked, summary = _beir(beir_dir, tmp_path, config, key="test-key")
        assert done.returncode == 0, done.stderr
        first_requests = len(fake.requests)
        again, reranked_again, summary_again = _beir(beir_dir, tmp_path, config, key="test-key")
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
        config = _config(
            tmp_path,
            f'reranker = "claude"\nrerank_depth = 3\n'
            f'[retrievers.hybrid.claude]\nbase_url = "{fake.base_url}"\n',
        )
        done, _, _ = _beir(beir_dir, tmp_path, config, key="test-key")
    assert done.returncode == 2
    assert "reranker's reply for query 'wing flutter' is malformed" in done.stderr
    assert problem in done.stderr


def test_claude_without_a_key_is_a_configuration_error(beir_dir: Path, tmp_path: Path) -> None:
    config = _config(tmp_path, 'reranker = "claude"\n')
    done, _, _ = _beir(beir_dir, tmp_path, config, key=None)
    assert done.returncode == 2
    assert "ANTHROPIC_API_KEY" in done.stderr


@pytest.mark.slow
def test_an_api_error_fails_the_run(beir_dir: Path, tmp_path: Path) -> None:
    with FakeAnthropic(responder=lambda body: (400, "bad request")) as fake:
        config = _config(
            tmp_path,
            f'reranker = "claude"\n[retrievers.hybrid.claude]\nbase_url = "{fake.base_url}"\n',
        )
        done, _, _ = _beir(beir_dir, tmp_path, config, key="test-key")
    assert done.returncode == 2
    assert "failed with HTTP 400" in done.stderr


def test_a_custom_factory_reranker(beir_dir: Path, tmp_path: Path) -> None:
    _, fused, _ = _beir(beir_dir, tmp_path, None, name="plain")
    config = _config(
        tmp_path,
        'reranker = "custom"\nrerank_depth = 2\n[retrievers.hybrid.custom]\n'
        'python = "tests.retrieval.own_reranker:make"\noptions = { cost = 0.0003 }\n',
    )
    done, reranked, summary = _beir(beir_dir, tmp_path, config)
    assert done.returncode == 0, done.stderr
    for qid, order in fused.items():
        assert reranked[qid] == sorted(order[:2], reverse=True) + order[2:]
    assert summary["cost_per_query_usd"] == pytest.approx(0.0003)
    assert summary["config"]["reranker"]["python"] == "tests.retrieval.own_reranker:make"


def test_a_custom_command_reranker_and_its_invented_result(beir_dir: Path, tmp_path: Path) -> None:
    _, fused, _ = _beir(beir_dir, tmp_path, None, name="plain")
    script = REPO_ROOT / "tests" / "retrieval" / "own_rerank_process.py"
    config = _config(
        tmp_path,
        f'reranker = "custom"\nrerank_depth = 3\n[retrievers.hybrid.custom]\n'
        f'command = ["{sys.executable}", "{script}"]\n',
    )
    done, reranked, summary = _beir(beir_dir, tmp_path, config)
    assert done.returncode == 0, done.stderr
    for qid, order in fused.items():
        assert reranked[qid] == sorted(order[:3], reverse=True) + order[3:]
    assert summary["cost_per_query_usd"] == pytest.approx(0.0002)

    bad = _config(
        tmp_path,
        f'reranker = "custom"\n[retrievers.hybrid.custom]\n'
        f'command = ["{sys.executable}", "{script}", "--invent"]\n',
    )
    done, _, _ = _beir(beir_dir, tmp_path, bad)
    assert done.returncode == 2
    assert "'not-a-candidate', which was not one of the" in done.stderr


def test_custom_reranker_needs_its_table(beir_dir: Path, tmp_path: Path) -> None:
    done, _, _ = _beir(beir_dir, tmp_path, _config(tmp_path, 'reranker = "custom"\n'))
    assert done.returncode == 2
    assert "[retrievers.hybrid.custom]" in done.stderr


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


SLOW_RERANKER = """\
import time

class Slow:
    name = "slow"

    def rerank(self, query, candidates):
        time.sleep(3600)  # never answers: the run must not wait for it

    def describe(self):
        return {}

def make():
    return Slow()
"""


def test_a_factory_reranker_imports_from_the_project_and_is_bounded_in_time(
    beir_dir: Path, tmp_path: Path
) -> None:
    """No PYTHONPATH: the module sits in the folder the command runs in, as in a repository."""
    project = tmp_path / "project"
    project.mkdir()
    (project / "slow_reranker.py").write_text(SLOW_RERANKER)
    (project / "retrieval-eval.toml").write_text(
        '[retrievers.hybrid]\nreranker = "custom"\n'
        '[retrievers.hybrid.custom]\npython = "slow_reranker:make"\ntimeout_s = 1\n'
    )
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    args = [str(CLI), "beir", str(beir_dir), "--retriever", "hybrid", "--k", "4"]
    done = subprocess.run(
        [*args, "--config", "retrieval-eval.toml"],
        capture_output=True,
        text=True,
        check=False,
        env=env,
        cwd=project,
        timeout=600,
    )
    assert done.returncode == 2, done.stderr
    assert "custom reranker slow_reranker:make: rerank() did not return within 1 s" in done.stderr
    assert "raise retrievers.hybrid.custom.timeout_s if it is just slow" in done.stderr
