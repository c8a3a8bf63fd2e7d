"""The Action's `judge` input: the key comes from the step's env; forks get none and skip it."""

from __future__ import annotations

import io
import json
from pathlib import Path

from retrieval_eval.action.evaluation import configure, evaluate
from retrieval_eval.action.event import decide_activity, read_event
from retrieval_eval.action.inputs import load_action_settings
from retrieval_eval.action.runner_files import RunnerFiles
from tests.action.payloads import pull_request_event
from tests.action.runner_env import runner_env
from tests.compare.conftest import Project

KEY = "sk-ant-action-secret-0815"


def _evaluate(tmp_path: Path, *, head_repo: str, env_extra: dict[str, str]) -> tuple[str, str]:
    project = Project(tmp_path / "workspace")
    event = tmp_path / "event.json"
    event.write_text(
        json.dumps(
            pull_request_event(number=7, head_sha="a" * 40, base_sha="b" * 40, head_repo=head_repo)
        ),
        encoding="utf-8",
    )
    env = runner_env(project.root, event_path=event, judge="true") | env_extra
    settings = load_action_settings(env)
    activity = decide_activity(
        mode=settings.mode, event_name="pull_request", payload=read_event(event), sha="e" * 40
    )
    log = io.StringIO()
    commands = RunnerFiles(log)
    result = evaluate(
        configure(settings, activity, commands),
        baseline=project.baseline,
        notices=(),
        write_baseline=False,
        commands=commands,
    )
    return result.verdict, log.getvalue()


def test_fork_pull_request_without_the_key_skips_the_judge_with_a_warning(
    tmp_path: Path,
) -> None:
    verdict, log = _evaluate(tmp_path, head_repo="mallory/notes", env_extra={})
    assert verdict == "baseline-established"
    assert (
        "::warning::the LLM judge is skipped: this fork pull request's run gets no secrets, "
        "so ANTHROPIC_API_KEY is not set"
    ) in log


def test_same_repository_pull_request_without_the_key_is_an_error(tmp_path: Path) -> None:
    verdict, log = _evaluate(tmp_path, head_repo="octo/notes", env_extra={})
    assert verdict == "error"
    assert "::error::the LLM judge is enabled but ANTHROPIC_API_KEY is not set" in log


def test_the_key_is_never_shown_in_the_settings_dump(tmp_path: Path) -> None:
    env = runner_env(tmp_path, judge="true") | {"ANTHROPIC_API_KEY": KEY}
    settings = load_action_settings(env)
    assert settings.judge is True
    assert settings.runner.anthropic_api_key is not None
    assert settings.runner.anthropic_api_key.get_secret_value() == KEY
    assert KEY not in repr(settings)
