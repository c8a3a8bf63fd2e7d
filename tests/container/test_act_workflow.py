"""A workflow that checks out and `uses: ./`, run by act on a pull_request event.

act builds the Action's Dockerfile the way a runner does (no --network=host, so the thin
image must build offline on top of the locally tagged base), runs the job in the
debootstrapped Debian image, and runs the Action's container in the job's network
(the host's), where the fake GitHub API listens on 127.0.0.1. act skips
`actions/checkout` of the repository it runs in and copies the working tree instead, so
nothing is fetched from GitHub.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.action.git_repo import commit_all, git, init_repo, write
from tests.action.payloads import pull_request_event
from tests.action.project import project_files
from tests.container.runner import record_timing, run_act, serve_base_commit_files
from tests.support.fake_github import FakeGitHub
from tests.support.runner_env import TOKEN

pytestmark = [pytest.mark.container, pytest.mark.slow]

REPO_ROOT = Path(__file__).resolve().parents[2]
WORKFLOW = Path(__file__).parent / "workflows" / "act-pull-request.yml"
# What a checkout of the Action's repository holds that `uses: ./` needs.
ACTION_FILES = ("action.yml", "Dockerfile", ".dockerignore", "pyproject.toml", "README.md")
MARKER = "<!-- retrieval-eval:retrieval-eval -->"


def action_checkout(path: Path) -> str:
    """A small notes project that carries the Action itself, as this repository does."""
    init_repo(path)
    write(path, project_files())
    for name in ACTION_FILES:
        shutil.copy(REPO_ROOT / name, path / name)
    shutil.copytree(REPO_ROOT / "src", path / "src", ignore=shutil.ignore_patterns("__pycache__"))
    (path / ".github" / "workflows").mkdir(parents=True)
    shutil.copy(WORKFLOW, path / ".github" / "workflows" / WORKFLOW.name)
    # act takes GITHUB_REPOSITORY from the origin remote; nothing is fetched from it.
    git(path, "remote", "add", "origin", "https://github.com/octo/notes.git")
    return commit_all(path, "the Action and its datasets")


def test_act_runs_the_workflow_and_the_comment_and_status_arrive(
    runner_image: str, github: FakeGitHub, tmp_path: Path
) -> None:
    workspace = tmp_path / "repo"
    base = action_checkout(workspace)
    git(workspace, "checkout", "-q", "-b", "feature")
    write(workspace, {"datasets/corpus/travel/porto.md": "# Porto\n\nPort wine cellars.\n"})
    head = commit_all(workspace, "a note on Porto")
    github.add_pull(7, head_sha=head, base_sha=base, files=["datasets/corpus/travel/porto.md"])
    serve_base_commit_files(github, workspace, base)
    event = tmp_path / "event.json"
    event.write_text(json.dumps(pull_request_event(number=7, head_sha=head, base_sha=base)))
    completed, took = run_act(
        WORKFLOW.name,
        event=event,
        runner_image=runner_image,
        workspace=workspace,
        home=tmp_path / "act-home",
        api_url=github.base_url,
        run_id="4242",
        timeout=600,
    )
    # Compared with the released image's job in docs/benchmarks.md (not asserted).
    record_timing("act job with `uses: ./` (image built)", took)
    log = completed.stdout + completed.stderr

    assert completed.returncode == 0, log
    assert "Job succeeded" in log
    assert "verdict: baseline-established" in log
    # An `::add-mask::` line (if act echoes it) is how the runner is told to hide the token.
    shown = "\n".join(line for line in log.splitlines() if "::add-mask::" not in line)
    assert TOKEN not in shown
    [comment] = github.comments_on(7)
    assert comment["body"].startswith(MARKER + "\n")
    assert f"comment: {comment['html_url']}" in log
    [status] = github.statuses_for(head)
    assert (status["state"], status["context"]) == ("success", "retrieval-eval")
    assert status["target_url"] == "https://github.example/octo/notes/actions/runs/4242"
