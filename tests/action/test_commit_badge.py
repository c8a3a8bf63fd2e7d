"""The README badge: a push to the default branch writes a shields.io endpoint JSON beside
the history, with the headline metric and the verdict, for the commit step to commit."""

from __future__ import annotations

import json

import pytest

from tests.action.git_repo import commit_all, git
from tests.action.payloads import push_event
from tests.action.project import REGRESSING_NOTES
from tests.security.harness import Repo

pytestmark = pytest.mark.slow


def test_each_push_to_main_writes_the_badge_and_other_branches_do_not(repo: Repo) -> None:
    badge = repo.path / "retrieval-eval-badge.json"
    first = repo.push(repo.head())
    assert first.outputs["verdict"] == "baseline-established", first.log
    assert json.loads(badge.read_text(encoding="utf-8")) == {
        "schemaVersion": 1,
        "label": "retrieval MRR@10",
        "message": "1.000 · baseline established",
        "color": "blue",
    }
    assert "retrieval-eval-badge.json; commit it in a following step" in first.log
    main = commit_all(repo.path, "retrieval-eval: baseline, history and badge")

    regressed = repo.commit(REGRESSING_NOTES, "rewrite two notes")
    pushed = repo.push(regressed)
    assert pushed.outputs["verdict"] == "regression", pushed.log
    shown = json.loads(badge.read_text(encoding="utf-8"))
    assert (shown["message"], shown["color"]) == ("0.667 · regression", "red")

    git(repo.path, "checkout", "-q", "-B", "feature", main)
    badge.unlink()
    other = repo.action("push", push_event(main, branch="feature"), sha=main)
    assert other.returncode == 0, other.log
    assert not badge.exists()
