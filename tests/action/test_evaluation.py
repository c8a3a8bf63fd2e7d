"""The Action's `judge` input: the key comes from the step's env; forks get none and skip it."""

from __future__ import annotations

from pathlib import Path

from retrieval_eval.action.inputs import load_action_settings
from tests.action.git_repo import git
from tests.action.payloads import pull_request_event
from tests.security.harness import Repo, Run
from tests.support.runner_env import runner_env

KEY = "sk-ant-action-secret-0815"


def _pull_request(repo: Repo, *, head_repo: str) -> Run:
    """A pull request from ``head_repo`` with the `judge` input on and no key in the env."""
    main = repo.head()
    repo.branch("feature", main)
    head = repo.commit({"README.md": "# notes search, again\n"}, "a small change")
    repo.github.add_pull(7, head_sha=head, base_sha=main, files=["README.md"])
    payload = pull_request_event(number=7, head_sha=head, base_sha=main, head_repo=head_repo)
    git(repo.path, "checkout", "-q", head)
    return repo.action("pull_request", payload, sha="e" * 40, judge="true")


def test_fork_pull_request_without_the_key_skips_the_judge_with_a_warning(repo: Repo) -> None:
    run = _pull_request(repo, head_repo="mallory/notes")
    assert run.outputs["verdict"] == "baseline-established", run.log
    assert (
        "::warning::the LLM judge is skipped: this fork pull request's run gets no secrets, "
        "so ANTHROPIC_API_KEY is not set"
    ) in run.log


def test_same_repository_pull_request_without_the_key_is_an_error(repo: Repo) -> None:
    run = _pull_request(repo, head_repo="octo/notes")
    assert run.outputs["verdict"] == "error", run.log
    assert "::error::the LLM judge is enabled but ANTHROPIC_API_KEY is not set" in run.log


def test_the_key_is_never_shown_in_the_settings_dump(tmp_path: Path) -> None:
    env = runner_env(tmp_path, judge="true") | {"ANTHROPIC_API_KEY": KEY}
    settings = load_action_settings(env)
    assert settings.overrides["judge"] == {"enabled": True}
    assert settings.runner.anthropic_api_key is not None
    assert settings.runner.anthropic_api_key.get_secret_value() == KEY
    assert KEY not in repr(settings)
