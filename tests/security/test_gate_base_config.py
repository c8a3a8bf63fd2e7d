"""A pull request cannot loosen its own gate.

Threat: the PR author edits `retrieval-eval.toml` (or deletes a dataset) in the
same pull request that makes retrieval worse. With `baseline-source: base` the
baseline already came from the base commit; now every setting that decides the
verdict does too (tolerance, thresholds, gated metrics, measures, k, min
fixtures and the dataset → retriever map). The PR's proposed values are shown
in the comment, marked "takes effect after merge". A baselined dataset that is
gone is a failing "removed" row, and removed fixtures head the comment.
"""

from __future__ import annotations

import os

import pytest

from tests.action.git_repo import commit_all
from tests.action.project import CONFIG, FIXTURES, REGRESSING_NOTES, fixture_lines
from tests.render.github_html import read
from tests.security.harness import Repo, Run

pytestmark = pytest.mark.slow

AFTER_MERGE = "takes effect after merge"


def regressing_pr(repo: Repo, number: int, files: dict[str, str], **inputs: str) -> Run:
    main = repo.establish_baseline()
    repo.branch(f"pr{number}", main)
    head = repo.commit({**REGRESSING_NOTES, **files}, "lose two answers, and loosen the gate")
    return repo.pull_request(number, main, head, **inputs)


LOOSENINGS = {
    "nothing gated": ("gated = []\n", "gated"),
    "a narrowed measure list": ('measures = ["p@5"]\n', "measures"),
    "a wide tolerance": ("tolerance = 0.9\n", "tolerance"),
    "a shallower k": ("k = 1\n", "k"),
    # No file there at the base commit: the run would establish a baseline, not compare.
    "a baseline file the base commit lacks": ('baseline = "fresh.json"\n', "baseline"),
}


@pytest.mark.parametrize("case", sorted(LOOSENINGS))
def test_the_prs_own_config_cannot_loosen_the_gate(repo: Repo, case: str) -> None:
    line, setting = LOOSENINGS[case]
    run = regressing_pr(repo, 20, {"retrieval-eval.toml": line + CONFIG})

    assert run.returncode == 1, run.log
    assert run.outputs["verdict"] == "regression"
    assert [s["state"] for s in run.statuses] == ["failure"]
    page = read(run.comment)
    assert "Regression: keyword.jsonl" in page.text
    assert AFTER_MERGE in page.text
    assert setting in page.text  # the proposed change is shown


def test_a_proposed_setting_is_shown_with_both_values(repo: Repo) -> None:
    main = repo.establish_baseline()
    repo.branch("tol", main)
    head = repo.commit({"retrieval-eval.toml": "tolerance = 0.2\n" + CONFIG}, "wider tolerance")
    run = repo.pull_request(21, main, head)
    assert run.returncode == 0, run.log
    assert run.outputs["verdict"] == "passed"
    page = read(run.comment)
    assert "tolerance: 0.05 → 0.2" in page.text
    assert AFTER_MERGE in page.text


def test_the_workspace_baseline_source_uses_the_prs_settings(repo: Repo) -> None:
    """`baseline-source: workspace` trusts the PR's files, as documented."""
    run = regressing_pr(
        repo, 22, {"retrieval-eval.toml": "tolerance = 0.9\n" + CONFIG}, baseline_source="workspace"
    )
    assert run.returncode == 0, run.log
    assert run.outputs["verdict"] == "passed"


def test_a_deleted_dataset_is_a_failing_removed_row(repo: Repo) -> None:
    mapped = CONFIG + '\n[dataset_retrievers]\n"semantic.jsonl" = "bm25"\n'
    repo.commit({"retrieval-eval.toml": mapped}, "search semantic.jsonl with BM25 too")
    main = repo.establish_baseline()
    repo.branch("rename", main)
    renamed = repo.commit(
        {"datasets/semantic.jsonl": fixture_lines(retrieval_type="semantic")},
        "move the fixtures to another dataset file",
        remove=("datasets/keyword.jsonl",),
    )
    run = repo.pull_request(23, main, renamed)

    assert run.returncode == 1, run.log
    assert run.outputs["verdict"] == "regression"
    assert [s["state"] for s in run.statuses] == ["failure"]
    assert "keyword.jsonl removed" in run.statuses[0]["description"]
    page = read(run.comment)
    [removed_table] = [t for t in page.tables if t[0][:2] == ["Dataset", "Baselined queries"]]
    assert removed_table[1] == ["keyword.jsonl", "6", "❌ removed"]
    # It comes first, before any dataset's own section.
    assert page.text.index("keyword.jsonl") < page.text.index("semantic.jsonl")


def test_removed_fixtures_are_listed_at_the_top(repo: Repo) -> None:
    """Dropping the two fixtures that would regress hides the drop from the shared-query gate;
    the reviewer is told at the top which fixtures went."""
    kept = [f for f in FIXTURES if f[0] not in {"k-005", "k-006"}]
    run = regressing_pr(repo, 24, {"datasets/keyword.jsonl": fixture_lines(kept)})
    top = run.comment.split("###", 1)[0]
    page = read(top)
    assert "2 fixtures removed" in page.text, run.comment
    assert "k-005" in page.text and "k-006" in page.text


def symlinked_pr(repo: Repo, number: int, link: str, target: str) -> Run:
    """A regressing pull request that also replaces ``link`` by a symlink to ``target``."""
    main = repo.establish_baseline()
    repo.branch(f"pr{number}", main)
    repo.commit(REGRESSING_NOTES, "lose two answers")
    (repo.path / link).unlink()
    os.symlink(target, repo.path / link)
    return repo.pull_request(number, main, commit_all(repo.path, f"{link} -> {target}"))


def test_a_symlinked_baseline_is_still_read_by_its_name_at_the_base(repo: Repo) -> None:
    """`baseline.json -> fresh.json`: following the link would read a file the base commit
    lacks, and a regressing pull request would pass as "baseline established"."""
    run = symlinked_pr(repo, 25, "baseline.json", "fresh.json")

    assert run.returncode == 1, run.log
    assert run.outputs["verdict"] == "regression"
    assert [s["state"] for s in run.statuses] == ["failure"]


def test_a_symlinked_configuration_is_still_read_by_its_name_at_the_base(repo: Repo) -> None:
    """`retrieval-eval.toml -> examples/lenient.toml`, a file the base commit has too."""
    repo.commit({"examples/lenient.toml": "tolerance = 0.9\n" + CONFIG}, "an example config")
    run = symlinked_pr(repo, 26, "retrieval-eval.toml", "examples/lenient.toml")

    assert run.returncode == 1, run.log
    assert run.outputs["verdict"] == "regression"
    assert [s["state"] for s in run.statuses] == ["failure"]
    assert "tolerance: 0.05 → 0.9" in read(run.comment).text
