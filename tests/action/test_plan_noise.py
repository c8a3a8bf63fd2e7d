"""The noise rules under the runner contract: `retrieval-eval action` on real git
repositories with a fake GitHub API.

`significance` and `max_regressed_queries` are gate settings: each flips a verdict the
default keeps, and only from the base commit (a pull request that sets one for itself
is gated by the base commit's value). Renamed query ids fail; a measure the baseline
never recorded is reported, not corrupt; an unchanged system draws a flat sparkline.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.action.git_repo import commit_all, init_repo, write
from tests.action.project import FIXTURES as PROJECT_FIXTURES
from tests.action.project import REGRESSING_NOTES, fixture_lines, new_project
from tests.action.test_main_scenarios import Repo, branch, establish_baseline_on_main
from tests.compare.noise_project import QUERIES, answers, config, project_files
from tests.support.fake_github import FakeGitHub

pytestmark = pytest.mark.slow

BASE_RANKS: dict[int, int | None] = {i: 1 if i <= 6 else 6 for i in range(1, QUERIES + 1)}
ONE_QUERY_SLIPS = {**BASE_RANKS, 1: 6}


@pytest.fixture
def noise_repo(tmp_path: Path, github: FakeGitHub) -> Repo:
    path = tmp_path / "workspace"
    init_repo(path)
    write(path, project_files(BASE_RANKS))
    commit_all(path, "24 queries over a scripted retriever")
    return Repo(path=path, runs=tmp_path / "runs", github=github, api_url=github.base_url)


@pytest.fixture
def repo(tmp_path: Path, github: FakeGitHub) -> Repo:
    """The six-query BM25 project of tests/action/project.py."""
    new_project(tmp_path / "workspace")
    return Repo(
        path=tmp_path / "workspace", runs=tmp_path / "runs", github=github, api_url=github.base_url
    )


def comment_on(repo: Repo, number: int) -> str:
    [comment] = repo.github.comments_on(number)
    body: str = comment["body"]
    return body


def test_significance_from_the_base_commit_passes_a_one_query_drop_the_default_fails(
    noise_repo: Repo,
) -> None:
    repo = noise_repo
    main = establish_baseline_on_main(repo)
    slip = {"answers.json": answers(ONE_QUERY_SLIPS)}

    # The default gate: one query's P@5 slot is a 16.7% drop, so it fails.
    branch(repo, main, "slip")
    head = repo.commit(slip, "one query slips")
    result = repo.pull_request(21, main, head)
    assert result.outputs["verdict"] == "regression", result.log
    assert "| keyword.jsonl |" in comment_on(repo, 21)
    assert "❌\u00a0regressed:\u00a0MRR@10,\u00a0NDCG@10,\u00a0P@5" in comment_on(repo, 21)

    # The pull request cannot turn significance on for itself: a gate setting.
    branch(repo, main, "slip-and-loosen")
    head = repo.commit({**slip, "retrieval-eval.toml": config("significance = 0.05\n")}, "loosen")
    result = repo.pull_request(22, main, head)
    assert result.outputs["verdict"] == "regression", result.log
    assert "significance: (none) → 0.05" in comment_on(repo, 22)

    # Once the base commit sets it, the same change is within noise.
    branch(repo, main, "main")
    noisy_main = repo.commit({"retrieval-eval.toml": config("significance = 0.05\n")}, "gate")
    branch(repo, noisy_main, "slip-again")
    head = repo.commit(slip, "one query slips")
    result = repo.pull_request(23, noisy_main, head)

    assert result.returncode == 0, result.log
    assert result.outputs["verdict"] == "passed"
    [status] = repo.github.statuses_for(head)
    assert status["state"] == "success"
    assert "within noise (p = 1.00)" in status["description"]
    body = comment_on(repo, 23)
    assert "⚠️\u00a0within\u00a0noise:\u00a0MRR@10,\u00a0NDCG@10,\u00a0P@5" in body
    assert "| P@5 | 0.050 | 0.042 | −0.008 | −16.7% | 1.000 |" in body
    assert "⚠️ within noise · within 1 query |" in body


def test_max_regressed_queries_from_the_base_commit_fails_what_the_means_pass(
    noise_repo: Repo,
) -> None:
    repo = noise_repo
    base = {i: 1 if i == 1 else 10 for i in range(1, QUERIES + 1)}
    change = {"answers.json": answers({**base, 1: None, 2: 1, 3: 1, 4: 1})}
    repo.commit({"answers.json": answers(base)}, "first answers")
    main = establish_baseline_on_main(repo)

    branch(repo, main, "trade")
    head = repo.commit(change, "q-01 loses its answer, three others gain")
    result = repo.pull_request(31, main, head)
    assert result.outputs["verdict"] == "passed", result.log  # every mean rose

    branch(repo, main, "main")
    strict_main = repo.commit(
        {"retrieval-eval.toml": config("max_regressed_queries = 0\n")}, "gate"
    )
    branch(repo, strict_main, "trade-again")
    head = repo.commit(change, "q-01 loses its answer, three others gain")
    result = repo.pull_request(32, strict_main, head)

    assert result.returncode == 1, result.log
    assert result.outputs["verdict"] == "regression"
    [status] = repo.github.statuses_for(head)
    assert status["state"] == "failure"
    assert status["description"].startswith(
        "Regression: keyword.jsonl 1 query lost every relevant hit (max_regressed_queries = 0)"
    )
    assert "❌ **1 query lost every relevant hit (max_regressed_queries = 0)**: q-01." in (
        comment_on(repo, 32)
    )


def test_renaming_every_query_id_fails_instead_of_comparing_nothing(repo: Repo) -> None:
    main = establish_baseline_on_main(repo)
    branch(repo, main, "rename")
    renamed = [(qid.replace("k-", "renamed-"), query, doc) for qid, query, doc in PROJECT_FIXTURES]
    head = repo.commit(
        {**REGRESSING_NOTES, "datasets/keyword.jsonl": fixture_lines(renamed)}, "rename every id"
    )

    result = repo.pull_request(41, main, head)

    assert result.returncode == 1, result.log
    assert result.outputs["verdict"] == "regression"
    [status] = repo.github.statuses_for(head)
    assert status["state"] == "failure"
    assert status["description"] == (
        "Regression: keyword.jsonl 6 of 6 baselined queries missing "
        "(at most 3 may be removed or renamed in one run)"
    )
    body = comment_on(repo, 41)
    assert "❌\u00a06\u00a0of\u00a06\u00a0queries\u00a0removed" in body
    assert "the gate compares only the queries both runs share" in body


def test_a_measure_the_baseline_never_recorded_is_new_on_a_pull_request(repo: Repo) -> None:
    main = establish_baseline_on_main(repo)
    config_file = repo.path / "retrieval-eval.toml"
    measures = 'measures = ["mrr@10", "ndcg@10", "p@5", "recall@10", "map"]\n'
    main = repo.commit({"retrieval-eval.toml": measures + config_file.read_text()}, "add MAP")
    branch(repo, main, "notes")
    lisbon = "# Lisbon\n\nTrams up the hills, pastel de nata.\n"
    head = repo.commit({"datasets/corpus/travel/lisbon.md": lisbon}, "edit a note")

    result = repo.pull_request(51, main, head)

    assert result.returncode == 0, result.log
    assert result.outputs["verdict"] == "passed"
    assert "| MAP | — |" in comment_on(repo, 51)
    assert "🆕 new |" in comment_on(repo, 51)

    # The next push to main establishes it, for a following step to commit.
    pushed = repo.push(main)
    assert pushed.returncode == 0, pushed.log
    baseline = json.loads((repo.path / "baseline.json").read_text(encoding="utf-8"))
    assert "map" in baseline["datasets"]["keyword.jsonl"]["aggregates"]


def test_an_unchanged_system_draws_a_flat_sparkline(repo: Repo) -> None:
    # Four of six queries answered: MRR@10 is 0.666…, which the history stores as 0.666667.
    repo.commit(REGRESSING_NOTES, "two notes lose their answers")
    main = establish_baseline_on_main(repo)

    again = repo.push(main)

    assert again.outputs["verdict"] == "passed", again.log
    assert "| keyword.jsonl | ▄▄\u00a00.667 | 0.0% |" in again.summary
