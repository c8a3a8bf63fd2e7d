from __future__ import annotations

from pathlib import Path

import pytest

from retrieval_eval.action.baseline_source import (
    baseline_at_base,
    baseline_in_workspace,
    change_notice,
)
from retrieval_eval.errors import RetrievalEvalError
from tests.action.git_repo import commit_all, init_repo, write


def no_api(path: str, ref: str) -> bytes | None:
    raise AssertionError("the history is there: the API must not be asked")


def test_the_base_commits_version_is_used_and_a_change_is_flagged(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    init_repo(repo)
    write(repo, {"eval/baseline.json": '{"v": "base"}'})
    base = commit_all(repo, "base")
    write(repo, {"eval/baseline.json": '{"v": "loosened by the PR"}'})
    commit_all(repo, "head")
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    choice = baseline_at_base(
        workspace_baseline=repo / "eval" / "baseline.json",
        workspace=repo,
        base_sha=base,
        changed_paths=frozenset({"eval/baseline.json"}),
        fetch_from_api=no_api,
        scratch_dir=scratch,
    )
    assert choice.path.read_text() == '{"v": "base"}'
    assert (choice.repo_path, choice.changed_by_pr) == ("eval/baseline.json", True)
    assert choice.origin == f"base commit {base[:7]}"
    assert change_notice(choice) == (
        "⚠️ **This pull request changes eval/baseline.json.** The gate used the version at the "
        f"base commit {base[:7]}, so the new values take effect only after merging. "
        "Review them before merging."
    )
    assert (repo / "eval" / "baseline.json").read_text() == '{"v": "loosened by the PR"}'


def test_no_baseline_at_base_means_none_to_compare_with(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    init_repo(repo)
    write(repo, {"README.md": "x"})
    base = commit_all(repo, "base")
    write(repo, {"baseline.json": "{}"})
    commit_all(repo, "head adds a baseline")
    choice = baseline_at_base(
        workspace_baseline=repo / "baseline.json",
        workspace=repo,
        base_sha=base,
        changed_paths=None,
        fetch_from_api=no_api,
        scratch_dir=tmp_path,
    )
    assert not choice.path.exists()
    assert choice.changed_by_pr  # decided by comparing contents when the file list is unknown


def test_without_history_the_contents_api_is_asked(tmp_path: Path) -> None:
    asked: list[tuple[str, str]] = []

    def api(path: str, ref: str) -> bytes | None:
        asked.append((path, ref))
        return b'{"from": "api"}'

    workspace = tmp_path / "ws"
    write(workspace, {"baseline.json": '{"from": "api"}'})
    choice = baseline_at_base(
        workspace_baseline=workspace / "baseline.json",
        workspace=workspace,
        base_sha="b" * 40,
        changed_paths=None,
        fetch_from_api=api,
        scratch_dir=tmp_path,
    )
    assert asked == [("baseline.json", "b" * 40)]
    assert choice.path.read_bytes() == b'{"from": "api"}'
    assert not choice.changed_by_pr


def test_when_neither_git_nor_the_api_can_tell_the_run_stops_with_advice(tmp_path: Path) -> None:
    def api(path: str, ref: str) -> bytes | None:
        raise RetrievalEvalError("reading baseline.json at bbbbbbb: GitHub answered 502: down")

    with pytest.raises(RetrievalEvalError) as caught:
        baseline_at_base(
            workspace_baseline=tmp_path / "baseline.json",
            workspace=tmp_path,
            base_sha="b" * 40,
            changed_paths=None,
            fetch_from_api=api,
            scratch_dir=tmp_path,
        )
    assert str(caught.value) == (
        "cannot read baseline.json at the base commit bbbbbbb: reading baseline.json at bbbbbbb: "
        "GitHub answered 502: down. Give the workflow `contents: read` permission "
        "or set `baseline-source: workspace`"
    )


def test_workspace_source_uses_the_checked_out_file_and_still_flags_a_change(
    tmp_path: Path,
) -> None:
    choice = baseline_in_workspace(
        workspace_baseline=tmp_path / "baseline.json",
        workspace=tmp_path,
        changed_paths=frozenset({"baseline.json"}),
    )
    assert choice.path == tmp_path / "baseline.json"
    assert choice.changed_by_pr and choice.origin == "workspace"
    assert "gates against the pull request's own version" in change_notice(choice)
