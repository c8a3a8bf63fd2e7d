"""The Action's entry: settings, then one activity, then exit. Dispatch only.

Whatever fails, the job summary gets a line saying what happened and the
``verdict`` output is set, so a red job is never a silent one.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from retrieval_eval.action.commit import run_commit
from retrieval_eval.action.evaluation import configure
from retrieval_eval.action.event import (
    CommitActivity,
    PublishActivity,
    PullRequestActivity,
    decide_activity,
    read_event,
)
from retrieval_eval.action.github_api import GitHubApi, quiet_identity_probe
from retrieval_eval.action.inputs import ActionSettings, load_action_settings
from retrieval_eval.action.publish_mode import run_publish
from retrieval_eval.action.pull_request import run_pull_request
from retrieval_eval.action.runner_files import WorkflowCommands, append_step_summary, write_outputs
from retrieval_eval.action.shard_modes import SHARD_MODES, run_shard_mode
from retrieval_eval.errors import RetrievalEvalError
from retrieval_eval.vocabulary import ExitCode


def run_action(env: Mapping[str, str], commands: WorkflowCommands | None = None) -> ExitCode:
    commands = commands or WorkflowCommands()
    try:
        settings = load_action_settings(env)
    except RetrievalEvalError as error:
        _report_failure(env, commands, str(error))
        return ExitCode.ERROR
    with commands.group("Settings"):
        commands.info(repr(settings))  # the token shows as SecretStr('**********')
    try:
        return _dispatch(settings, commands)
    except RetrievalEvalError as error:
        _report_failure(env, commands, str(error))
        return ExitCode.ERROR
    except Exception as error:  # a bug: still leave a summary, and say where to report it
        detail = f"unexpected {type(error).__name__}: {_redact(str(error), settings)}"
        _report_failure(
            env,
            commands,
            f"{detail}\nThis is a bug in retrieval-eval: please report it with this log.",
        )
        return ExitCode.ERROR


def _dispatch(settings: ActionSettings, commands: WorkflowCommands) -> ExitCode:
    if settings.mode in SHARD_MODES:
        return run_shard_mode(settings, commands)
    runner = settings.runner
    activity = decide_activity(
        mode=settings.mode,
        event_name=runner.event_name,
        payload=read_event(runner.event_path),
        sha=runner.sha,
    )
    settings = configure(settings, activity, commands)
    quiet_identity_probe()
    api = GitHubApi(
        token=settings.github_token,
        api_url=runner.api_url,
        repository=runner.repository,
        retry_budget_seconds=settings.github_retry_seconds,
    )
    if isinstance(activity, PullRequestActivity):
        return run_pull_request(settings, activity, api, commands)
    if isinstance(activity, CommitActivity):
        return run_commit(settings, activity, api, commands)
    assert isinstance(activity, PublishActivity)
    return run_publish(settings, activity, api, commands)


def _redact(text: str, settings: ActionSettings) -> str:
    token = settings.github_token.get_secret_value()
    return text.replace(token, "***") if token else text


def _report_failure(env: Mapping[str, str], commands: WorkflowCommands, message: str) -> None:
    token = env.get("INPUT_GITHUB-TOKEN", "")
    if token:
        message = message.replace(token, "***")
    commands.error(message)
    summary = env.get("GITHUB_STEP_SUMMARY")
    output = env.get("GITHUB_OUTPUT")
    append_step_summary(
        Path(summary) if summary else None, f"### ❌ retrieval-eval failed\n\n```\n{message}\n```\n"
    )
    write_outputs(Path(output) if output else None, {"verdict": "error"})
