"""A pull request as GitHub runs it: a real git repository, `retrieval-eval action` started
through its console script under the runner's environment, and the fake GitHub API.

The security tests read as the threat model: each one plays what a pull request
author (or a broken environment) can do, and asserts what the reviewer sees.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.action.git_repo import commit_all, git, write
from tests.action.payloads import pull_request_event, push_event
from tests.action.project import new_project
from tests.support.action import run_action
from tests.support.fake_github import FakeGitHub
from tests.support.runner_env import TOKEN

MARKER = "<!-- retrieval-eval:retrieval-eval -->"


@dataclass(frozen=True)
class Run:
    returncode: int
    log: str
    outputs: dict[str, str]
    summary: str
    comments: list[str] = field(default_factory=list)
    statuses: list[dict[str, Any]] = field(default_factory=list)

    @property
    def comment(self) -> str:
        assert self.comments, f"no comment was posted; log:\n{self.log}"
        return self.comments[-1]


@dataclass
class Repo:
    path: Path
    runs: Path
    github: FakeGitHub
    count: int = 0

    def commit(self, files: dict[str, str], message: str, *, remove: tuple[str, ...] = ()) -> str:
        write(self.path, files)
        for name in remove:
            git(self.path, "rm", "-q", name)
        return commit_all(self.path, message)

    def head(self) -> str:
        return git(self.path, "rev-parse", "HEAD")

    def branch(self, name: str, start: str) -> None:
        git(self.path, "checkout", "-q", "-B", name, start)

    def action(
        self,
        event_name: str,
        payload: dict[str, Any],
        sha: str,
        extra_env: dict[str, str] | None = None,
        **inputs: str,
    ) -> Run:
        self.count += 1
        inputs.setdefault("github_retry_seconds", "5")
        run = run_action(
            self.path,
            self.runs / f"run{self.count}",
            event_name=event_name,
            payload=payload,
            api_url=self.github.base_url,
            sha=sha,
            extra_env=extra_env,
            **inputs,
        )
        return Run(returncode=run.returncode, log=run.log, outputs=run.outputs, summary=run.summary)

    def pull_request(
        self,
        number: int,
        base: str,
        head: str,
        extra_env: dict[str, str] | None = None,
        **inputs: str,
    ) -> Run:
        files = git(self.path, "diff", "--name-only", f"{base}...{head}").splitlines()
        self.github.add_pull(number, head_sha=head, base_sha=base, files=files)
        payload = pull_request_event(
            number=number, head_sha=head, base_sha=base, changed_files=len(files)
        )
        git(self.path, "checkout", "-q", head)
        run = self.action("pull_request", payload, sha="e" * 40, extra_env=extra_env, **inputs)
        return Run(
            returncode=run.returncode,
            log=run.log,
            outputs=run.outputs,
            summary=run.summary,
            comments=[c["body"] for c in self.github.comments_on(number)],
            statuses=self.github.statuses_for(head),
        )

    def push(self, sha: str, **inputs: str) -> Run:
        git(self.path, "checkout", "-q", sha)
        return self.action("push", push_event(sha), sha=sha, **inputs)

    def establish_baseline(self) -> str:
        """The documented recipe: a push run writes baseline.json, a later step commits it."""
        pushed = self.push(self.head())
        assert pushed.returncode == 0, pushed.log
        assert pushed.outputs["verdict"] == "baseline-established", pushed.log
        return commit_all(self.path, "retrieval-eval: establish baseline")


@pytest.fixture
def repo(tmp_path: Path) -> Iterator[Repo]:
    with FakeGitHub(token=TOKEN, repository="octo/notes") as github:
        path = tmp_path / "workspace"
        new_project(path)
        yield Repo(path=path, runs=tmp_path / "runs", github=github)
