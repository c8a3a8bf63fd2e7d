"""Evaluate a pull request: filter by changed paths, gate against the base, post or hand over.

Order matters: results reach the step summary and outputs first; then the
comment and status are posted (or, for a fork, written to files for
``mode: publish``). A failure to post is exit 2, after the results are safe.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from retrieval_eval.action.acceptance import (
    ACCEPTABLE,
    Refusal,
    acceptance_summary,
    accepted,
    check_acceptance,
)
from retrieval_eval.action.baseline_source import (
    BaselineChoice,
    baseline_at_base,
    baseline_in_workspace,
    change_notice,
)
from retrieval_eval.action.changed_files import ChangedFiles, changed_files
from retrieval_eval.action.checkout import checked_out_code_problem
from retrieval_eval.action.deliver import deliver, mark_comment_skipped
from retrieval_eval.action.evaluation import Evaluated, failed, run_and_record
from retrieval_eval.action.event import PullRequestActivity
from retrieval_eval.action.fork import ForkMetadata, write_fork_results
from retrieval_eval.action.github_api import GitHubApi
from retrieval_eval.action.inputs import ActionSettings
from retrieval_eval.action.path_filter import PathFilter
from retrieval_eval.action.plan import RunPlan
from retrieval_eval.action.runner_files import RunnerFiles
from retrieval_eval.action.stale_baseline import stale_baseline_notice
from retrieval_eval.action.status import skipped_description
from retrieval_eval.errors import RetrievalEvalError
from retrieval_eval.vocabulary import ExitCode

FORK_DOCS = "docs/action.md#fork-pull-requests"


def run_pull_request(
    settings: ActionSettings,
    plan: RunPlan,
    pull: PullRequestActivity,
    api: GitHubApi,
    commands: RunnerFiles,
) -> ExitCode:
    path_filter = PathFilter(settings.paths)
    with commands.group("Changed files"):
        changes = changed_files(
            list_from_api=lambda: api.pull_request_files(pull.number),
            declared_count=pull.changed_files_count,
            workspace=settings.runner.workspace,
            base_sha=pull.base_sha,
            head_sha=pull.head_sha,
        )
        _log_changes(changes, path_filter, commands)
    # Unknown changes (None) always evaluate: never skip on doubt.
    watched = path_filter.is_empty or changes.paths is None
    if not watched and not path_filter.matching(sorted(changes.paths or ())):
        return _skip(settings, plan, pull, api, commands, path_filter)

    with tempfile.TemporaryDirectory(prefix="retrieval-eval-base-") as scratch:
        try:
            checked_out_code_problem(settings.runner, pull)
            choice = _choose_baseline(settings, plan, pull, api, changes, Path(scratch))
        except RetrievalEvalError as error:
            result = failed(error, commands, settings, plan.notices)
            return _publish(settings, plan, pull, api, commands, result)
        notices = list(plan.notices)
        # The adoption pull request adds the baseline: its own notice says so, once.
        if choice.changed_by_pr and not plan.adoption:
            notices.append(change_notice(choice))
            commands.warning(change_notice(choice).replace("**", ""), title="baseline changed")
        if plan.adoption:
            commands.info(f"No {choice.repo_path} at the base commit: this run establishes it.")
        else:
            commands.info(f"Gating against {choice.repo_path} from the {choice.origin}.")
        stale = stale_baseline_notice(
            plan, baseline=choice.path, base_sha=pull.base_sha, commands=commands
        )
        if stale is not None:
            notices.append(stale.notice)
        # The baseline read from the base commit is a scratch copy: never write to it.
        result = run_and_record(
            settings,
            plan,
            baseline=choice.path,
            notices=notices,
            write_baseline=False,
            commands=commands,
            stale=None if stale is None else stale.headline,
        )
    return _publish(
        settings, plan, pull, api, commands, _accept(settings, pull, api, commands, result)
    )


def _accept(
    settings: ActionSettings,
    pull: PullRequestActivity,
    api: GitHubApi,
    commands: RunnerFiles,
    result: Evaluated,
) -> Evaluated:
    """A regression a maintainer accepted with the label is ``accepted``; asked of GitHub
    on every run, so a label whose author cannot write, that is gone, or that a push came
    after, accepts nothing."""
    if result.verdict not in ACCEPTABLE:
        return result
    found = check_acceptance(api, pull, settings.accept_label, settings.status_context)
    if found is None:
        return result
    if isinstance(found, Refusal):
        commands.warning(found.reason, title="regression not accepted")
        return result
    result = accepted(result, found)
    commands.record(
        result.verdict, result.status_description, summary=acceptance_summary(result, found)
    )
    return result


def _log_changes(changes: ChangedFiles, path_filter: PathFilter, commands: RunnerFiles) -> None:
    if changes.paths is None:
        commands.warning(f"Evaluating anyway: changed files unknown, because {changes.source}.")
        return
    commands.info(f"{len(changes.paths)} changed file(s), from the {changes.source}.")
    if not path_filter.is_empty:
        matching = path_filter.matching(sorted(changes.paths))
        commands.info(f"{len(matching)} match `paths` ({path_filter.describe()}).")


def _choose_baseline(
    settings: ActionSettings,
    plan: RunPlan,
    pull: PullRequestActivity,
    api: GitHubApi,
    changes: ChangedFiles,
    scratch: Path,
) -> BaselineChoice:
    baseline = plan.require().baseline
    if settings.baseline_source == "workspace":
        return baseline_in_workspace(
            workspace_baseline=baseline,
            workspace=settings.runner.workspace,
            changed_paths=changes.paths,
        )
    return baseline_at_base(
        workspace_baseline=baseline,
        workspace=settings.runner.workspace,
        base_sha=pull.base_sha,
        changed_paths=changes.paths,
        fetch_from_api=api.file_at,
        scratch_dir=scratch,
    )


def _skip(
    settings: ActionSettings,
    plan: RunPlan,
    pull: PullRequestActivity,
    api: GitHubApi,
    commands: RunnerFiles,
    path_filter: PathFilter,
) -> ExitCode:
    """Still set a success status, so a required check never waits forever on an unrelated PR,
    and mark an earlier evaluation's comment as not about this commit."""
    description = skipped_description(path_filter.describe())
    commands.record(
        "skipped",
        description,
        summary=f"### ⏭️ retrieval-eval {description}\n",
        outputs={"report-json": "", "report-markdown": "", "report-html": "", "metrics": "{}"},
    )
    skipped = Evaluated("skipped", ExitCode.OK, "", description, None, None, {})
    code = _publish(settings, plan, pull, api, commands, skipped)
    if code != ExitCode.OK or pull.token_is_read_only:
        return code  # a fork's token cannot edit the comment
    failure = mark_comment_skipped(
        api,
        settings,
        commands,
        pr_number=pull.number,
        sha=pull.head_sha,
        paths=path_filter.describe(),
    )
    return code if failure is None else failure


def _publish(
    settings: ActionSettings,
    plan: RunPlan,
    pull: PullRequestActivity,
    api: GitHubApi,
    commands: RunnerFiles,
    result: Evaluated,
) -> ExitCode:
    has_comment = result.verdict != "skipped" and settings.comment != "off"
    if pull.token_is_read_only:
        return _hand_over_fork(settings, plan, pull, commands, result, has_comment)
    failure = deliver(
        api,
        settings,
        commands,
        sha=pull.head_sha,
        verdict=result.verdict,
        description=result.status_description,
        group_title="Publishing to GitHub",
        pr_number=pull.number,
        comment_markdown=result.comment_markdown if has_comment else None,
    )
    if failure is not None:
        return failure
    return final_exit_code(result, settings)


def _hand_over_fork(
    settings: ActionSettings,
    plan: RunPlan,
    pull: PullRequestActivity,
    commands: RunnerFiles,
    result: Evaluated,
    has_comment: bool,
) -> ExitCode:
    metadata = ForkMetadata(
        pr_number=pull.number,
        head_sha=pull.head_sha,
        verdict=result.verdict,
        status_description=result.status_description,
        comment_id=settings.comment_id,
        has_comment=has_comment,
    )
    write_fork_results(plan.report_dir, metadata, result.comment_markdown if has_comment else None)
    commands.warning(
        f"This pull request comes from a fork ({pull.head_repository}); its token cannot comment "
        f"or set a status. The comment and status were written to {plan.report_dir.name}/ "
        f"for a `mode: publish` job in a workflow_run workflow to post. See {FORK_DOCS}.",
        title="fork pull request",
    )
    return final_exit_code(result, settings)


def final_exit_code(result: Evaluated, settings: ActionSettings) -> ExitCode:
    if result.verdict in {"regression", "threshold"} and not settings.fail_on_regression:
        return ExitCode.OK
    return result.exit_code
