"""``mode: publish``: post what a fork pull request's run left behind, from a trusted run.

Runs in a ``workflow_run`` workflow with write permission. The files were
written by code the fork controls, so: they are validated; the status context
and comment id come from this job's inputs, not the files; the status goes on
the commit the triggering run evaluated; and the comment goes on the pull
request only if that commit is still its head.
"""

from __future__ import annotations

from retrieval_eval.action.deliver import deliver
from retrieval_eval.action.event import PublishActivity
from retrieval_eval.action.fork import read_fork_results
from retrieval_eval.action.github_api import GitHubApi, GitHubApiError
from retrieval_eval.action.inputs import ActionSettings
from retrieval_eval.action.plan import RunPlan
from retrieval_eval.action.runner_files import RunnerFiles
from retrieval_eval.errors import RetrievalEvalError
from retrieval_eval.vocabulary import ExitCode


def run_publish(
    settings: ActionSettings,
    plan: RunPlan,
    activity: PublishActivity,
    api: GitHubApi,
    commands: RunnerFiles,
) -> ExitCode:
    if plan.config_error is not None:
        commands.warning(
            f"the configuration file is not valid ({plan.config_error}); reading fork "
            f"results from {plan.report_dir.name}/"
        )
    try:
        results = read_fork_results(plan.report_dir)
    except RetrievalEvalError as error:
        commands.error(f"Refusing to publish: {error}", file=error.shown_file)
        summary = f"### ❌ retrieval-eval refused to publish\n\n{error}\n"
        commands.record("error", f"refused to publish: {error}", summary=summary)
        return ExitCode.ERROR
    if results is None:
        note = f"Nothing to publish: {plan.report_dir.name}/ holds no fork results."
        commands.record("skipped", note, summary=f"### retrieval-eval: {note}\n")
        return ExitCode.OK

    meta = results.metadata
    problem = _mismatch(settings, activity, meta.head_sha, meta.comment_id)
    if problem:
        commands.error(f"Refusing to publish: {problem}")
        summary = f"### ❌ retrieval-eval refused to publish\n\n{problem}\n"
        commands.record("error", f"refused to publish: {problem}", summary=summary)
        return ExitCode.ERROR
    commands.record(
        meta.verdict,
        meta.status_description,
        summary=results.comment_markdown
        or f"### retrieval-eval: {meta.verdict}\n\n{meta.status_description}\n",
    )

    try:
        current_head = api.pull_request_head_sha(meta.pr_number)
    except GitHubApiError as error:
        commands.error(f"The results are in the job summary, but publishing failed: {error}")
        return ExitCode.ERROR
    comment_markdown = results.comment_markdown
    if current_head != meta.head_sha:
        commands.warning(
            f"#{meta.pr_number} has moved on to {current_head[:7]}; its comment is left "
            f"for that commit's run. Setting the status on {meta.head_sha[:7]} only."
        )
        comment_markdown = None
    failure = deliver(
        api,
        settings,
        commands,
        sha=meta.head_sha,
        verdict=meta.verdict,
        description=meta.status_description,  # from the fork's files: deliver() fits it
        group_title=f"Publishing results of #{meta.pr_number} ({meta.head_sha[:7]})",
        pr_number=meta.pr_number,
        comment_markdown=comment_markdown,
    )
    return failure or ExitCode.OK


def _mismatch(
    settings: ActionSettings, activity: PublishActivity, head_sha: str, comment_id: str
) -> str | None:
    trigger = activity.triggering_head_sha
    if trigger != head_sha:
        return f"the results are for {head_sha[:7]}, but the triggering run evaluated {trigger[:7]}"
    if comment_id != settings.comment_id:
        return (
            f"the results belong to evaluation {comment_id!r}, this job publishes "
            f"{settings.comment_id!r} (set `comment-id`/`status-context` alike in both workflows)"
        )
    return None
