"""The two entry points a user hits, as subprocesses: ``retrieval-eval CMD`` and
``retrieval-eval action`` under the runner's environment contract (both started by
``tests/support/action.py``), in a git workspace with the fake GitHub API.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.action.git_repo import commit_all, git, write
from tests.action.payloads import pull_request_event, push_event
from tests.action.project import new_project
from tests.support.action import ActionRun, run_action, run_cli
from tests.support.fake_github import FakeGitHub
from tests.support.runner_env import TOKEN


@dataclass
class World:
    """A git workspace with the small notes project, a runs folder and the fake GitHub."""

    workspace: Path
    runs: Path
    github: FakeGitHub
    count: int = 0

    def commit(self, files: dict[str, str], message: str = "change") -> str:
        write(self.workspace, files)
        return commit_all(self.workspace, message)

    def head(self) -> str:
        return git(self.workspace, "rev-parse", "HEAD")

    def action(
        self,
        event_name: str,
        payload: dict[str, Any],
        *,
        sha: str,
        extra_env: dict[str, str] | None = None,
        preexec_fn: Callable[[], None] | None = None,
        **inputs: str,
    ) -> ActionRun:
        self.count += 1
        inputs.setdefault("github_retry_seconds", "2")
        return run_action(
            self.workspace,
            self.runs / f"run{self.count}",
            event_name=event_name,
            payload=payload,
            api_url=self.github.base_url,
            sha=sha,
            extra_env=extra_env,
            preexec_fn=preexec_fn,
            **inputs,
        )

    def pull_request(self, number: int, base: str, head: str, **kwargs: Any) -> ActionRun:
        files = git(self.workspace, "diff", "--name-only", f"{base}...{head}").splitlines()
        self.github.add_pull(number, head_sha=head, base_sha=base, files=files)
        payload = pull_request_event(
            number=number, head_sha=head, base_sha=base, changed_files=len(files)
        )
        git(self.workspace, "checkout", "-q", head)
        return self.action("pull_request", payload, sha="e" * 40, **kwargs)

    def push(self, sha: str, **kwargs: Any) -> ActionRun:
        git(self.workspace, "checkout", "-q", sha)
        return self.action("push", push_event(sha), sha=sha, **kwargs)


def new_world(tmp_path: Path, github: FakeGitHub) -> World:
    workspace = tmp_path / "workspace"
    new_project(workspace)
    return World(workspace=workspace, runs=tmp_path / "runs", github=github)


__all__ = ["TOKEN", "ActionRun", "World", "new_world", "run_cli", "world_in"]


def world_in(tmp_path: Path) -> Iterator[World]:
    """For each test module's ``world`` fixture: ``yield from world_in(tmp_path)``."""
    with FakeGitHub(token=TOKEN, repository="octo/notes") as github:
        yield new_world(tmp_path, github)
