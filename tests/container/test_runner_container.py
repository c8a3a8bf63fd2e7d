"""The Action's image run exactly as GitHub's runner runs it, against the fake GitHub API.

The workspace is a real git repository holding this repository's own golden datasets
(dense, BM25 and hybrid retrieval, so the baked-in ONNX model is exercised), with a base
and a head commit. Every run is cold: a fresh home and no embedding cache.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.action.git_repo import commit_all, git, init_repo, write
from tests.action.payloads import pull_request_event, push_event, workflow_dispatch_event
from tests.action.project import REGRESSING_NOTES, new_project
from tests.container.runner import (
    ContainerRun,
    record_timing,
    run_container,
    serve_base_commit_files,
)
from tests.support.fake_github import FakeGitHub
from tests.support.runner_env import TOKEN

pytestmark = [pytest.mark.container, pytest.mark.slow]

REPO_ROOT = Path(__file__).resolve().parents[2]
RUN_URL = "https://github.example/octo/notes/actions/runs/4242"
MARKER = "<!-- retrieval-eval:retrieval-eval -->"
DATASET_FILES = {"semantic.jsonl", "keyword.jsonl", "hybrid.jsonl"}
RUNNER_USER = (1001, 127)  # the uid and gid of GitHub's runner user on ubuntu-latest
MERGE_SHA = "e" * 40  # GITHUB_SHA of a pull_request run: the merge commit, never the status target


def own_datasets_workspace(path: Path) -> str:
    """A repository like a user's: datasets/ and the config, committed on main."""
    init_repo(path)
    shutil.copytree(REPO_ROOT / "datasets", path / "datasets")
    shutil.copy(REPO_ROOT / "retrieval-eval.toml", path / "retrieval-eval.toml")
    write(path, {"README.md": "# notes\n"})
    return commit_all(path, "notes and golden datasets")


def open_pull(
    github: FakeGitHub, workspace: Path, number: int, base: str, head: str, action: str = "opened"
) -> dict[str, object]:
    changed = git(workspace, "diff", "--name-only", f"{base}...{head}").splitlines()
    files: list[str | dict[str, Any]] = [*changed]
    github.add_pull(number, head_sha=head, base_sha=base, files=files)
    serve_base_commit_files(github, workspace, base)
    git(workspace, "checkout", "-q", head)
    return pull_request_event(
        number=number, head_sha=head, base_sha=base, action=action, changed_files=len(changed)
    )


def assert_clean(run: ContainerRun) -> None:
    # `::add-mask::TOKEN` is how the runner is told to hide it; the runner never shows it.
    masks = [line for line in run.log.splitlines() if line.startswith("::add-mask::")]
    assert f"::add-mask::{TOKEN}" in masks
    shown = "\n".join(line for line in run.log.splitlines() if line not in masks)
    assert TOKEN not in shown, "the token leaked into the log"
    assert TOKEN not in run.summary


def test_a_pull_request_gets_one_comment_a_status_and_outputs_and_a_push_updates_it(
    action_image: str, github: FakeGitHub, tmp_path: Path
) -> None:
    workspace = tmp_path / "workspace"
    base = new_project(workspace)
    git(workspace, "checkout", "-q", "-b", "feature")
    write(workspace, {"datasets/corpus/travel/porto.md": "# Porto\n\nPort wine cellars.\n"})
    head = commit_all(workspace, "a note on Porto")
    event = open_pull(github, workspace, 7, base, head)

    first = run_container(
        action_image, workspace, tmp_path / "run1", event_name="pull_request", payload=event,
        api_url=github.base_url, sha=MERGE_SHA, github_retry_seconds="5",
    )  # fmt: skip

    assert first.returncode == 0, first.log
    assert_clean(first)
    assert first.outputs["verdict"] == "baseline-established"
    [comment] = github.comments_on(7)
    assert comment["body"].startswith(MARKER + "\n")
    assert first.outputs["comment-url"] == comment["html_url"]
    [status] = github.statuses_for(head)
    assert (status["state"], status["context"], status["target_url"]) == (
        "success",
        "retrieval-eval",
        RUN_URL,
    )
    assert github.statuses_for(MERGE_SHA) == []
    assert json.loads(first.outputs["metrics"])["keyword.jsonl"]["mrr@10"] == 1.0
    # The outputs name files in the container's workspace, which is the mounted one.
    report = Path(first.outputs["report-json"])
    assert report.parts[:3] == ("/", "github", "workspace")
    assert (workspace / report.relative_to("/github/workspace")).is_file()
    assert "baseline established" in first.summary.lower()
    assert "keyword.jsonl" in first.summary

    write(workspace, {"datasets/corpus/travel/porto.md": "# Porto\n\nPort wine and tiles.\n"})
    second_head = commit_all(workspace, "tiles")
    event = open_pull(github, workspace, 7, base, second_head, action="synchronize")
    second = run_container(
        action_image, workspace, tmp_path / "run2", event_name="pull_request", payload=event,
        api_url=github.base_url, sha=MERGE_SHA, github_retry_seconds="5",
    )  # fmt: skip

    assert second.returncode == 0, second.log
    assert [c["id"] for c in github.comments_on(7)] == [comment["id"]]
    assert len(github.requests_to("PATCH", "/issues/comments/")) == 1
    assert second.outputs["comment-url"] == comment["html_url"]
    assert [s["state"] for s in github.statuses_for(second_head)] == ["success"]


def test_a_regression_fails_the_status_and_the_step(
    action_image: str, github: FakeGitHub, tmp_path: Path
) -> None:
    workspace = tmp_path / "workspace"
    new_project(workspace)
    main = git(workspace, "rev-parse", "HEAD")
    # A push run leaves baseline.json in the workspace; the documented next step commits it.
    pushed = run_container(
        action_image, workspace, tmp_path / "push", event_name="push",
        payload=push_event(main), api_url=github.base_url, sha=main,
    )  # fmt: skip
    assert pushed.returncode == 0, pushed.log
    assert pushed.outputs["verdict"] == "baseline-established"
    main = commit_all(workspace, "retrieval-eval: establish baseline")
    git(workspace, "checkout", "-q", "-b", "break-deploy")
    write(workspace, REGRESSING_NOTES)
    head = commit_all(workspace, "rewrite two notes")
    event = open_pull(github, workspace, 9, main, head)

    run = run_container(
        action_image, workspace, tmp_path / "pr", event_name="pull_request", payload=event,
        api_url=github.base_url, sha=MERGE_SHA,
    )  # fmt: skip

    assert run.returncode == 1, run.log
    assert_clean(run)
    assert run.outputs["verdict"] == "regression"
    [status] = github.statuses_for(head)
    assert status["state"] == "failure"
    # Four of the six fixtures still find their note: MRR@10 drops from 1 to 4/6.
    assert "keyword.jsonl MRR@10 1.000 → 0.667" in status["description"]
    [comment] = github.comments_on(9)
    assert "regress" in comment["body"].lower()
    assert "regress" in run.summary.lower()


def test_the_own_datasets_are_evaluated_cold_with_no_network_at_all(
    action_image: str, tmp_path: Path
) -> None:
    """Dense retrieval with the baked-in model, BM25 and hybrid, in a container that has no
    network: nothing is downloaded at start. Also the start-to-verdict time CI reports."""
    workspace = tmp_path / "workspace"
    sha = own_datasets_workspace(workspace)
    # A self-hosted runner's workspace belongs to the runner's user, not to root (the
    # container's user): what the Action writes there must be that user's too.
    for path in [workspace, *owned(workspace)]:
        os.chown(workspace / path, *RUNNER_USER, follow_symlinks=False)

    run = run_container(
        action_image, workspace, tmp_path / "run", event_name="workflow_dispatch",
        payload=workflow_dispatch_event(), api_url="http://127.0.0.1:9/api/v3", sha=sha,
        network="none", github_retry_seconds="0",
    )  # fmt: skip
    record_timing("container start to verdict on datasets/ (cold, no embedding cache)", run.seconds)

    # Every dataset was evaluated; only publishing the status failed, as it must here.
    assert run.returncode == 2, run.log
    assert run.outputs["verdict"] in {"baseline-established", "passed", "threshold"}, run.log
    metrics = json.loads(run.outputs["metrics"])
    assert set(metrics) == DATASET_FILES
    assert all(0.0 <= metrics[name]["mrr@10"] <= 1.0 for name in DATASET_FILES)
    assert "could not reach the GitHub API" in run.log
    for name in DATASET_FILES:
        assert name in run.summary
    # The model came from the image: the runner's home is untouched.
    assert not any((tmp_path / "run" / "home").iterdir())
    # The report folder, the baseline and the embedding cache, and all they hold, belong to
    # the workspace's owner (a run of a push also appends the history: tests/action covers it).
    files = owned(workspace)
    for name in ("retrieval-eval-report", "baseline.json"):
        assert name in files, sorted(files)
    assert any(name.startswith(".retrieval-eval-cache/") for name in files), sorted(files)
    assert {name: owner for name, owner in files.items() if owner != RUNNER_USER} == {}


def owned(root: Path) -> dict[str, tuple[int, int]]:
    """Every path under ``root`` (relative) with its owner and group."""
    found = {}
    for folder, dirs, files in os.walk(root):
        for name in (*dirs, *files):
            status = (Path(folder) / name).lstat()
            found[str((Path(folder) / name).relative_to(root))] = (status.st_uid, status.st_gid)
    return found
