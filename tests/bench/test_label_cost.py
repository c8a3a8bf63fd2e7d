"""bench/label_cost.py: the budget's count is the cap's own, and one whole run through the
console script on a five-document collection, so the benchmark cannot rot."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

import pytest

from retrieval_eval.score.cached_claude import worst_input_tokens
from retrieval_eval.settings import JudgeSettings
from tests.bench.test_gate_power import _tiny_collection

BENCH = Path(__file__).resolve().parents[2] / "bench" / "label_cost.py"


@pytest.fixture(scope="module")
def lc() -> ModuleType:
    spec = importlib.util.spec_from_file_location("label_cost", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["label_cost"] = module
    spec.loader.exec_module(module)
    return module


def test_the_budget_count_is_the_cap_s_and_the_proxy_counts_words(lc: ModuleType) -> None:
    prompts = ["wing lift drag " * 10, "engine thrust"]
    costs = lc._costs(prompts, lc._proxy_counter(), JudgeSettings())
    assert costs["pairs"] == 2
    assert costs["budget_input_tokens"] == sum(worst_input_tokens(p) for p in prompts)
    assert costs["budget_output_tokens"] == 2 * 32
    # WordPiece: one token a common word, plus the message's framing.
    assert costs["proxy_input_tokens"] == 30 + 2 + 2 * lc.FRAMING_TOKENS
    assert costs["proxy_usd"] == pytest.approx(
        (costs["proxy_input_tokens"] * 1.0 + costs["proxy_output_tokens"] * 5.0) / 1e6
    )


@pytest.mark.slow
def test_a_whole_run_through_the_console_script(lc: ModuleType, tmp_path: Path) -> None:
    beir = _tiny_collection(tmp_path)
    out = tmp_path / "cost.json"
    lc.main([str(beir), "--work", str(tmp_path / "work"), "--depth", "2", "--json", str(out)])
    data = json.loads(out.read_text())
    assert (data["collection"], data["queries"], data["scale_to"]) == ("tiny", 4, 400)
    # Two retrievers' top 2 over five documents: 2 to 4 pairs a query.
    assert 8 <= data["first"]["pairs"] <= 16
    assert 2 <= data["pairs_per_query"]["min"] <= data["pairs_per_query"]["max"] <= 4
    assert set(data["pull_requests"]) == set(lc.PULL_REQUESTS)
    for costs in data["pull_requests"].values():
        assert 0 <= costs["pairs"] <= 8
