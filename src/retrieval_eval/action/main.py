"""The Action's entry: settings, then one activity, then exit. Dispatch only.

Whatever fails, the job summary gets a line saying what happened and the
``verdict`` output is set, so a red job is never a silent one.
"""

from __future__ import annotations

import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import TextIO

from retrieval_eval.action.commit import run_commit
from retrieval_eval.action.event import (
    Activity,
    CommitActivity,
    PublishActivity,
    PullRequestActivity,
    decide_activity,
    read_event,
)
from retrieval_eval.action.git_credentials import (
    ADVICE,
    SSH_ADVICE,
    ssh_key_persisted,
    token_persisted,
)
from retrieval_eval.action.github_api import GitHubApi, GitHubApiError, quiet_identity_probe
from retrieval_eval.action.inputs import ActionSettings, load_action_settings
from retrieval_eval.action.plan import RunPlan, build_plan
from retrieval_eval.action.publish_mode import run_publish
from retrieval_eval.action.pull_request import run_pull_request
from retrieval_eval.action.runner_files import RunnerFiles
from retrieval_eval.action.shard_modes import SHARD_MODES, run_shard_mode
from retrieval_eval.errors import RetrievalEvalError
from retrieval_eval.fileio import give_to_owner_of
from retrieval_eval.render.badge import badge_path
from retrieval_eval.render.escape import visible
from retrieval_eval.render.no_report import escaped_lines
from retrieval_eval.trust.crash import format_traceback, unexpected_error
from retrieval_eval.vocabulary import ExitCode, fit_status_description


def run_action(env: Mapping[str, str], stream: TextIO | None = None) -> ExitCode:
    """``stream`` receives the workflow commands (stdout by default)."""
    commands = RunnerFiles.from_env(env, stream)
    code = _run(env, commands)
    commands.finish(int(code))
    return code


def _run(env: Mapping[str, str], commands: RunnerFiles) -> ExitCode:
    try:
        settings = load_action_settings(env)
    except RetrievalEvalError as error:
        _report_failure(commands, str(error))
        return ExitCode.ERROR
    with commands.group("Settings"):
        commands.info(repr(settings))  # the token shows as SecretStr('**********')
    try:
        return _dispatch(settings, commands)
    except RetrievalEvalError as error:
        _report_failure(commands, str(error))
        return ExitCode.ERROR
    except BaseException as error:  # a bug, or a fault of the machine: still say so
        if isinstance(error, KeyboardInterrupt):
            raise
        if settings.runner.debug:
            commands.info(format_traceback(error))
        _report_failure(commands, str(unexpected_error(error)))
        return ExitCode.ERROR


def _dispatch(settings: ActionSettings, commands: RunnerFiles) -> ExitCode:
    runner = settings.runner
    activity = decide_activity(
        mode=settings.mode,
        event_name=runner.event_name,
        payload=read_event(runner.event_path),
        sha=runner.sha,
    )
    quiet_identity_probe()
    api = GitHubApi(
        token=settings.github_token,
        api_url=runner.api_url,
        repository=runner.repository,
        retry_budget_seconds=settings.github_retry_seconds,
    )
    plan: RunPlan | None = None
    try:
        with tempfile.TemporaryDirectory(prefix="retrieval-eval-base-") as scratch:
            plan = build_plan(settings, activity, api, commands, scratch=Path(scratch))
        if settings.mode in SHARD_MODES:
            return run_shard_mode(settings, plan, commands)
        if isinstance(activity, PullRequestActivity):
            if token_persisted(runner.workspace):
                commands.warning(ADVICE, title="token readable by the retriever")
            if ssh_key_persisted(runner.workspace):
                commands.warning(SSH_ADVICE, title="SSH key readable by the retriever")
            return run_pull_request(settings, plan, activity, api, commands)
        if isinstance(activity, CommitActivity):
            return run_commit(settings, plan, activity, api, commands)
        assert isinstance(activity, PublishActivity)
        return run_publish(settings, plan, activity, api, commands)
    except BaseException as error:
        if settings.mode not in SHARD_MODES:
            _last_resort_status(settings, activity, api, commands, error)
        raise
    finally:
        # Only a posted comment has a URL; every other ending leaves the output empty.
        commands.default_outputs({"comment-url": "", "commit-files": ""})
        _give_back_to_workspace_owner(runner.workspace, plan, commands)


def _give_back_to_workspace_owner(
    workspace: Path, plan: RunPlan | None, commands: RunnerFiles
) -> None:
    """What the run wrote into the workspace (the container runs as root) gets the
    workspace's owner, so a self-hosted runner's later steps can replace and remove it."""
    written = [plan.report_dir] if plan is not None else []
    if plan is not None and plan.settings is not None:
        run = plan.settings
        written += [run.baseline, run.cache_dir]
        if run.history is not None:
            written += [run.history, badge_path(run.history)]
        if run.judged.enabled:
            written.append(run.judged.judgments)
    failed = give_to_owner_of(workspace, written)
    if failed:
        commands.warning(
            f"Could not give {len(failed)} file(s) to the workspace's owner, first {failed[0]}",
            title="root-owned files",
        )


def _last_resort_status(
    settings: ActionSettings,
    activity: Activity,
    api: GitHubApi,
    commands: RunnerFiles,
    error: BaseException,
) -> None:
    """The run failed before it set its verdict's status (a stop request, a full disk while
    appending the history, a bug): set ``error`` with the reason, so a required check does
    not wait for a status that will never come. The caller still reports the error."""
    if api.status_set:
        return
    if isinstance(activity, PullRequestActivity) and not activity.token_is_read_only:
        sha = activity.head_sha
    elif isinstance(activity, CommitActivity):
        sha = activity.sha
    else:  # a fork's read-only token cannot set one; `publish` validates what it posts
        return
    reason = error if isinstance(error, RetrievalEvalError) else unexpected_error(error)
    try:
        api.create_status(
            sha,
            state="error",
            description=visible(fit_status_description(f"error: {reason}")),
            context=settings.status_context,
            target_url=settings.runner.run_url,
        )
    except GitHubApiError as failure:
        commands.error(f"Setting the error status failed too: {failure}")


def _report_failure(commands: RunnerFiles, message: str) -> None:
    commands.error(message)
    # The message can quote a file name or a retriever's output: escaped line by line as in
    # the comment, never inside a code block that three backticks in it could close.
    lines = "\n\n".join(escaped_lines(message))
    summary = f"### ❌ retrieval-eval failed\n\n{lines}\n"
    commands.record("error", fit_status_description(message), summary=summary)
