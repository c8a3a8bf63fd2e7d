"""Evaluate a commit (push, manual or scheduled run).

The baseline-null rule may write an established ``baseline.json`` into the
workspace; it is left there for a following workflow step to commit (see
docs/action.md, "Keeping the baseline up to date").
"""

from __future__ import annotations

from retrieval_eval.errors import ExitCode
from retrieval_eval.publish.evaluation import evaluate
from retrieval_eval.publish.event import CommitActivity
from retrieval_eval.publish.github_api import GitHubApi, GitHubApiError
from retrieval_eval.publish.inputs import ActionSettings
from retrieval_eval.publish.pull_request import final_exit_code
from retrieval_eval.publish.runner_files import WorkflowCommands, write_outputs
from retrieval_eval.publish.status import state_for


def run_commit(
    settings: ActionSettings, commit: CommitActivity, api: GitHubApi, commands: WorkflowCommands
) -> ExitCode:
    result = evaluate(
        settings, baseline=settings.baseline, notices=(), write_baseline=True, commands=commands
    )
    if result.verdict == "baseline-established":
        commands.notice(
            f"Baseline established in {settings.baseline.name}; commit it in a following step "
            "to gate later changes against it."
        )
    write_outputs(settings.runner.output_file, {"comment-url": ""})
    try:
        with commands.group("Publishing to GitHub"):
            api.create_status(
                commit.sha,
                state=state_for(result.verdict),
                description=result.status_description,
                context=settings.status_context,
                target_url=settings.runner.run_url,
            )
    except GitHubApiError as error:
        commands.error(f"The results are in the job summary, but publishing failed: {error}")
        return ExitCode.ERROR
    return final_exit_code(result, settings)
