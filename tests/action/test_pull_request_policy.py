"""The gate's policy through `retrieval-eval action` on real git repositories: a baseline
that follows main (a revert of a merged gain fails), several datasets that each fall a
little fail, a reordering of tied documents passes, and every report says what its
datasets can resolve and the policy in one line.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.action.git_repo import commit_all, git
from tests.action.project import REGRESSING_NOTES
from tests.action.test_commit_keeps_gains import RESTORED_NOTES, baseline, weak_baseline_on_main
from tests.action.test_main_scenarios import Repo, branch, establish_baseline_on_main
from tests.support.action import ActionRun
from tests.support.fake_github import FakeGitHub

pytestmark = pytest.mark.slow

RESOLUTION = "four times in five"
POLICY_LINE = "Gate: "


def resolution_shown(run: ActionRun, *texts: str) -> None:
    """The resolution line (and the policy) is in the job summary and every other text."""
    for text in (run.summary, *texts):
        assert "What each dataset can resolve" in text, text
        assert RESOLUTION in text and "queries would resolve" in text
        assert POLICY_LINE in text


@pytest.fixture
def repo(tmp_path: Path, github: FakeGitHub) -> Repo:
    """The runner-contract project under the default rule."""
    from tests.action.git_repo import write
    from tests.action.project import DEFAULT_RULE_CONFIG, new_project

    new_project(tmp_path / "workspace")
    write(tmp_path / "workspace", {"retrieval-eval.toml": DEFAULT_RULE_CONFIG})
    commit_all(tmp_path / "workspace", "the default gate rule")
    return Repo(
        path=tmp_path / "workspace", runs=tmp_path / "runs", github=github, api_url=github.base_url
    )


def test_a_revert_of_a_merged_improvement_fails(repo: Repo) -> None:
    weak_baseline_on_main(repo)
    assert baseline(repo)["aggregates"]["ndcg@10"] == pytest.approx(2 / 3)

    # The improvement is merged: main's push run keeps the gain (the headline metric the
    # default rule gates), with no input set.
    better = repo.commit(RESTORED_NOTES, "restore the two notes")
    merged = repo.push(better)
    assert merged.outputs["verdict"] == "passed", merged.log
    assert baseline(repo)["aggregates"]["ndcg@10"] == 1.0
    resolution_shown(merged)
    main = commit_all(repo.path, "retrieval-eval: baseline and history")

    # A pull request that reverts it gives the gain back: a regression.
    branch(repo, main, "revert")
    reverted = repo.commit(REGRESSING_NOTES, 'Revert "restore the two notes"')
    result = repo.pull_request(31, main, reverted)
    assert result.returncode == 1, result.log
    assert result.outputs["verdict"] == "regression"
    [comment] = repo.github.comments_on(31)
    assert "NDCG@10 1.000 → 0.667" in comment["body"]
    resolution_shown(result, comment["body"])


# --- three datasets that each fall 8% ---------------------------------------------------------

# Notes with words of their own: each query finds its note first, and only its note.
WORDS = [
    "amber", "basalt", "cobalt", "dune", "ember", "fjord", "garnet", "heron", "indigo", "jasper",
    "kelp", "lichen", "marble", "nectar", "onyx", "pewter", "quartz", "russet", "saffron",
    "tundra", "umber", "violet", "willow", "xenon", "yarrow",
]  # fmt: skip
# Dataset files are named by retrieval type; all three are served by BM25 here.
DATASETS = ("hybrid", "keyword", "semantic")


def _note(dataset: str, i: int) -> str:
    return f"# {dataset} {WORDS[i]}\n\n{dataset}{WORDS[i]} {WORDS[i]}stone {WORDS[i]}field.\n"


def three_dataset_project(root: Path) -> None:
    from tests.action.git_repo import init_repo, write

    files = {".gitignore": "retrieval-eval-report/\n.retrieval-eval-cache/\n"}
    retrievers = []
    for dataset in DATASETS:
        lines = []
        for i in range(25):
            files[f"datasets/corpus/{dataset}/{i:02d}.md"] = _note(dataset, i)
            lines.append(
                json.dumps(
                    {
                        "query_id": f"{dataset}-{i:02d}",
                        "query": f"{dataset}{WORDS[i]} {WORDS[i]}stone",
                        "retrieval_type": dataset,
                        "expected_top_k_ids": [f"{dataset}/{i:02d}"],
                        "ground_truth_source": "human-annotated",
                    }
                )
            )
        files[f"datasets/{dataset}.jsonl"] = "\n".join(lines) + "\n"
        retrievers.append(f'"{dataset}.jsonl" = "bm25"')
    files["retrieval-eval.toml"] = (
        "min_fixtures = 3\nmin_human = 1\n\n[dataset_retrievers]\n"
        + "\n".join(retrievers)
        + '\n\n[thresholds]\n"mrr@10" = false\n"ndcg@10" = false\n"p@5" = false\n'
    )
    init_repo(root)
    write(root, files)
    commit_all(root, "three datasets")


def test_three_datasets_each_down_8_percent_fail_under_the_default(
    tmp_path: Path, github: FakeGitHub
) -> None:
    root = tmp_path / "workspace"
    three_dataset_project(root)
    repo = Repo(path=root, runs=tmp_path / "runs", github=github, api_url=github.base_url)
    main = establish_baseline_on_main(repo)
    branch(repo, main, "vaguer")
    # Two of each dataset's 25 notes lose their words: 2 / 25 = 8% of every mean.
    vaguer = {
        f"datasets/corpus/{dataset}/{i:02d}.md": f"# {dataset} note\n\nSomething else.\n"
        for dataset in DATASETS
        for i in (3, 17)
    }
    head = repo.commit(vaguer, "shorter notes")
    result = repo.pull_request(32, main, head)
    assert result.returncode == 1, result.log
    assert result.outputs["verdict"] == "regression"
    [comment] = repo.github.comments_on(32)
    body = comment["body"]
    # The default rule pools the three datasets' NDCG@10: one 8% drop over 75 queries.
    assert "Regression: 3 datasets pooled (75 queries) NDCG@10 −8.0%" in body
    assert "(−8.0%)" in body
    # Each dataset is where the pooled drop fell: shown opened, its regressed queries listed.
    assert body.count("**Queries that regressed") == 3
    resolution_shown(result, body)
    for dataset in DATASETS:
        assert f"{dataset}.jsonl: 25 queries: this gate catches a drop in NDCG@10" in body


# --- a reordering of tied documents ------------------------------------------------------------


def test_a_tie_only_reordering_passes(repo: Repo) -> None:
    # Two notes k-005 ("run migrations and roll back the release") matches equally (same
    # words), neither of them its answer: the answer ranks first, the tied pair after it.
    tied = "# Release day\n\nThe release went out.\n"
    main_files = {
        "datasets/corpus/walks/a-first.md": tied,
        "datasets/corpus/walks/b-second.md": tied,
    }
    repo.commit(main_files, "two walking notes")
    main = establish_baseline_on_main(repo)
    branch(repo, main, "rename")
    # Renaming one swaps the tied pair's order: the ranking changes, no score does.
    git(repo.path, "mv", "datasets/corpus/walks/a-first.md", "datasets/corpus/walks/c-third.md")
    head = commit_all(repo.path, "rename a walking note")
    result = repo.pull_request(33, main, head)
    assert result.returncode == 0, result.log
    assert result.outputs["verdict"] == "passed"
    [comment] = repo.github.comments_on(33)
    body = comment["body"]
    assert "regressed" not in body and "improved" not in body
    assert "possibly a missing label" not in body
    resolution_shown(result, body)


def test_a_retriever_searched_with_repeats_is_never_ratcheted(repo: Repo) -> None:
    from tests.action.project import DEFAULT_RULE_CONFIG

    repo.commit(
        {"retrieval-eval.toml": "repeats = 3\n" + DEFAULT_RULE_CONFIG}, "search each query 3 times"
    )
    weak_baseline_on_main(repo)
    before = (repo.path / "baseline.json").read_text(encoding="utf-8")
    better = repo.commit(RESTORED_NOTES, "restore the two notes")
    pushed = repo.push(better)
    assert pushed.outputs["verdict"] == "passed", pushed.log
    # A ratchet would keep the luckiest of a varying retriever's runs: it is held.
    assert (repo.path / "baseline.json").read_text(encoding="utf-8") == before
    assert "::warning title=baseline held::keyword.jsonl was not ratcheted: the retriever is " in (
        pushed.log
    )
