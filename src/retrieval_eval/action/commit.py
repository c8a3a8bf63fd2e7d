"""Evaluate a commit (push, manual or scheduled run).

The baseline-null rule may write an established ``baseline.json`` into the
workspace; it is left there for a following workflow step to commit (see
docs/action.md, "Keeping the baseline up to date").
"""

from __future__ import annotations

from retrieval_eval.action.deliver import deliver
from retrieval_eval.action.evaluation import evaluate
from retrieval_eval.action.event import CommitActivity
from retrieval_eval.action.github_api import GitHubApi
from retrieval_eval.action.inputs import ActionSettings
from retrieval_eval.action.pull_request import final_exit_code
from retrieval_eval.action.runner_files import WorkflowCommands
from retrieval_eval.vocabulary import ExitCode


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
    failure = deliver(
        api,
        settings,
        commands,
        sha=commit.sha,
        verdict=result.verdict,
        description=result.status_description,
        group_title="Publishing to GitHub",
    )
    if failure is not None:
        return failure
    return final_exit_code(result, settings)
