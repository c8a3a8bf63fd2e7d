"""Generated queries on Cranfield (1,400 abstracts) find their source documents.

The writer is the extractive stand-in of tests/author/fake_writer.py on the loopback
Messages API: keyword styles get the document's rare terms, paraphrase styles every other
word of its first sentence without them. So this measures generate's own parts — which
documents it picks, which terms it calls rare, what its checks keep — and a real
`retrieval-eval run` scores the kept fixtures. bench/bench_generate.py reports the same
with dense retrieval too (docs/benchmarks.md).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.author.cli import retrieval_eval
from tests.author.fake_writer import writer
from tests.support.fake_anthropic import FakeAnthropic

CONFIG = """corpus = "cranfield"
measures = ["hit_rate@10", "mrr@10"]
min_fixtures = 0
min_human = 0
[thresholds]
"ndcg@10" = false
"p@5" = false
"mrr@10" = false
[dataset_retrievers]
"semantic.jsonl" = "bm25"
"keyword.jsonl" = "bm25"
"""


@pytest.mark.slow
def test_generated_queries_retrieve_their_source_on_cranfield(
    tmp_path: Path, cranfield_beir: Path
) -> None:
    shutil.copytree(cranfield_beir, tmp_path / "cranfield")
    (tmp_path / "retrieval-eval.toml").write_text(CONFIG)
    with FakeAnthropic(responder=writer()) as fake:
        env = {"ANTHROPIC_API_KEY": fake.api_key, "ANTHROPIC_BASE_URL": fake.base_url}
        generated = retrieval_eval(
            "generate", "--per-file", "20", "--types", "keyword,semantic",
            "--check-with", "bm25", cwd=tmp_path, env=env,
        )  # fmt: skip
    assert generated.returncode == 0, generated.stderr
    run = retrieval_eval("run", "--quiet", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    report = json.loads((tmp_path / "retrieval-eval-report" / "report.json").read_text())
    rates = {
        d["name"]: (d["num_queries"], d["aggregates"]["hit_rate@10"]["value"])
        for d in report["datasets"]
    }
    # Measured: keyword 20 queries, HitRate@10 1.00; semantic 20, 0.45 (BM25 only; a
    # paraphrase is meant to be hard for it).
    assert rates["keyword.jsonl"][0] == 20 and rates["keyword.jsonl"][1] >= 0.95
    assert rates["semantic.jsonl"][0] == 20 and rates["semantic.jsonl"][1] >= 0.35
