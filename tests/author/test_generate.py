"""`retrieval-eval generate` against the loopback Messages API with the real client."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from retrieval_eval.load.fixtures import Fixture
from tests.author.cli import retrieval_eval
from tests.author.fake_writer import answer, writer
from tests.support.fake_anthropic import FakeAnthropic

# 1,200 input and 8 output tokens per fake reply, at $1 / $5 per million tokens.
COST_PER_CALL = 0.00124


@pytest.fixture
def project(tmp_path: Path, repo_root: Path) -> Path:
    shutil.copytree(repo_root / "datasets" / "corpus", tmp_path / "notes")
    (tmp_path / "retrieval-eval.toml").write_text('corpus = "notes"\n')
    return tmp_path


def _env(fake: FakeAnthropic) -> dict[str, str]:
    return {"ANTHROPIC_API_KEY": fake.api_key, "ANTHROPIC_BASE_URL": fake.base_url}


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.mark.slow
def test_keyword_and_semantic_files_validate_and_a_copied_paraphrase_is_regenerated(
    project: Path,
) -> None:
    calls: list[str] = []
    # The first attempt at a paraphrase of the Lisbon note reuses its words, so BM25 finds
    # it at rank 1; the second says the same thing in other words.
    scripted = {
        ("travel/lisbon", 1): "lisbon trams budget",
        ("travel/lisbon", 2): "where to stay cheaply on a city break in Portugal",
    }
    with FakeAnthropic(responder=writer(scripted, log=calls)) as fake:
        result = retrieval_eval(
            "generate",
            "--per-file",
            "4",
            "--types",
            "keyword,semantic",
            "--seed",
            "3",
            cwd=project,
            env=_env(fake),
        )
    assert result.returncode == 0, result.stderr
    keyword = _lines(project / "datasets" / "keyword.jsonl")
    semantic = _lines(project / "datasets" / "semantic.jsonl")
    assert len(keyword) == len(semantic) == 4
    for fixture in keyword + semantic:
        Fixture.model_validate(fixture)
        assert fixture["ground_truth_source"] == "synthetic"
        assert fixture["answer_context"]  # copied from the source passage
    assert {f["query_type"] for f in keyword} == {"exact_match", "keyword"}
    assert {f["query_type"] for f in semantic} <= {"paraphrase", "synonym"}
    # Keyword queries are made of the document's own rare terms; every file covers
    # different documents first.
    assert not {f["expected_top_k_ids"][0] for f in keyword} & {
        f["expected_top_k_ids"][0] for f in semantic
    }
    validate = retrieval_eval(
        "validate",
        "datasets",
        "--corpus",
        "notes",
        "--min-fixtures",
        "4",
        "--min-human",
        "0",
        cwd=project,
    )
    assert validate.returncode == 0, validate.stdout + validate.stderr
    assert f"cost: ${COST_PER_CALL * len(calls):.4f} ({len(calls)} API calls, 0 cached)" in (
        result.stdout
    )
    if "travel/lisbon#1" in calls:
        assert "travel/lisbon#2" in calls
        lisbon = [f for f in semantic if f["expected_top_k_ids"] == ["travel/lisbon"]]
        assert lisbon[0]["query"] == scripted[("travel/lisbon", 2)]


@pytest.mark.slow
def test_a_rerun_is_answered_from_the_cache_and_writes_the_same_bytes(project: Path) -> None:
    with FakeAnthropic(responder=writer()) as fake:
        first = retrieval_eval(
            "generate", "--per-file", "3", "--check-with", "bm25", cwd=project, env=_env(fake)
        )
        assert first.returncode == 0, first.stderr
        written = {p.name: p.read_bytes() for p in (project / "datasets").glob("*.jsonl")}
        calls = len(fake.requests)
    # No key at all now: every answer must come from the cache.
    again = retrieval_eval(
        "generate", "--per-file", "3", "--check-with", "bm25", "--force", cwd=project
    )
    assert again.returncode == 0, again.stderr
    assert f"cost: $0.0000 (0 API calls, {calls} cached)" in again.stdout
    assert {p.name: p.read_bytes() for p in (project / "datasets").glob("*.jsonl")} == written


def test_existing_files_are_not_replaced_without_force(project: Path) -> None:
    (project / "datasets").mkdir()
    (project / "datasets" / "semantic.jsonl").write_text("mine\n")
    result = retrieval_eval("generate", cwd=project)
    assert result.returncode == 2
    assert (
        "semantic.jsonl: exists; pass --append to add fixtures to it, or --force" in result.stderr
    )
    assert (project / "datasets" / "semantic.jsonl").read_text() == "mine\n"


@pytest.mark.slow
def test_a_malformed_answer_fails_loudly_and_writes_nothing(project: Path) -> None:
    with FakeAnthropic(responder=lambda body: (200, "Sure! Here is a query: budget travel")) as f:
        result = retrieval_eval(
            "generate", "--per-file", "2", "--check-with", "bm25", cwd=project, env=_env(f)
        )
    assert result.returncode == 2
    assert "the model's answer for gen-sem-001 is not a JSON object" in result.stderr
    assert not (project / "datasets").exists()


@pytest.mark.slow
def test_the_cost_cap_stops_before_it_is_passed(project: Path) -> None:
    with FakeAnthropic(responder=writer()) as fake:
        result = retrieval_eval(
            "generate",
            "--per-file",
            "5",
            "--types",
            "keyword",
            "--max-cost-usd",
            "0.004",
            "--check-with",
            "bm25",
            cwd=project,
            env=_env(fake),
        )
    assert result.returncode == 1
    assert "stopped early: stopped before passing --max-cost-usd 0.004" in result.stderr
    spent = COST_PER_CALL * len(fake.requests)
    assert 0 < spent <= 0.004
    assert len(_lines(project / "datasets" / "keyword.jsonl")) == len(fake.requests)


@pytest.mark.slow
def test_a_query_no_retriever_finds_is_flagged_not_kept(project: Path) -> None:
    def nonsense(body: dict[str, Any]) -> tuple[int, str]:
        return 200, answer("zyxxy qwop flurb", [], "")

    with FakeAnthropic(responder=nonsense) as fake:
        result = retrieval_eval(
            "generate",
            "--per-file",
            "2",
            "--types",
            "keyword",
            "--check-with",
            "bm25",
            cwd=project,
            env=_env(fake),
        )
    assert result.returncode == 0, result.stderr
    assert (project / "datasets" / "keyword.jsonl").read_text() == ""
    flagged = _lines(project / "retrieval-eval-report" / "generate-flagged.jsonl")
    assert flagged and all("not in the top 100 of bm25" in f["reason"] for f in flagged)
    assert "warning: fewer than 2: the corpus ran out of documents" in result.stderr


@pytest.mark.slow
def test_tags_add_a_filtered_case_and_an_expect_empty_case(project: Path) -> None:
    with FakeAnthropic(responder=writer()) as fake:
        result = retrieval_eval(
            "generate",
            "--per-file",
            "3",
            "--types",
            "hybrid",
            "--tags",
            cwd=project,
            env=_env(fake),
        )
    assert result.returncode == 0, result.stderr
    hybrid = _lines(project / "datasets" / "hybrid.jsonl")
    filtered = [f for f in hybrid if f.get("filters")]
    assert [f.get("expect_empty", False) for f in filtered] == [False, True]
    assert filtered[1]["expected_top_k_ids"] == []
    assert any(
        f["query_type"] == "multi_concept" and len(f["expected_top_k_ids"]) == 2 for f in hybrid
    )


@pytest.mark.slow
def test_a_ci_log_shows_how_many_fixtures_are_made_as_it_goes(project: Path) -> None:
    """generate printed nothing while it indexed and asked Claude; now each step shows
    its progress (the thresholds at zero, so this does not depend on the machine)."""
    config = project / "retrieval-eval.toml"
    config.write_text(config.read_text() + "\n[progress]\nafter_s = 0\nevery_s = 0\n")
    with FakeAnthropic(responder=writer()) as fake:
        done = retrieval_eval(
            "generate",
            "--per-file",
            "3",
            "--types",
            "keyword,semantic",
            "--check-with",
            "bm25",
            "--no-progress",
            cwd=project,
            env=_env(fake),
        )
    assert done.returncode == 0, done.stderr
    assert "\r" not in done.stderr
    made = re.findall(
        r"^generating fixtures: (\d+)/6 fixtures \(\d+%\), [\d.]+ fixtures/s", done.stderr, re.M
    )
    assert [int(n) for n in made] == sorted(int(n) for n in made) and made[-1] == "6", done.stderr
    assert len(made) >= 3
    assert re.search(r"^indexing for bm25: 61 documents in [\d.]+ s$", done.stderr, re.M)
    assert re.search(r"^generating fixtures: 6 fixtures in [\d.]+ s$", done.stderr, re.M)
