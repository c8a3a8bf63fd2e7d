"""Evaluate a commit (push, manual or scheduled run).

The baseline-null rule may write an established ``baseline.json`` into the
workspace, and a push to the default branch appends its numbers to
``retrieval-eval-history.jsonl`` beside it; both are left there for a following
workflow step to commit (see docs/action.md, "Keeping the baseline up to date").
"""

from __future__ import annotations

from datetime import UTC, datetime

from retrieval_eval.action.deliver import deliver
from retrieval_eval.action.evaluation import evaluate
from retrieval_eval.action.event import CommitActivity
from retrieval_eval.action.github_api import GitHubApi
from retrieval_eval.action.inputs import ActionSettings
from retrieval_eval.action.plan import RunPlan
from retrieval_eval.action.pull_request import final_exit_code
from retrieval_eval.action.runner_files import RunnerFiles
from retrieval_eval.compare.history import append_history
from retrieval_eval.vocabulary import ExitCode


def run_commit(
    settings: ActionSettings,
    plan: RunPlan,
    commit: CommitActivity,
    api: GitHubApi,
    commands: RunnerFiles,
) -> ExitCode:
    run = plan.settings
    result = evaluate(settings, plan, notices=(), write_baseline=True, commands=commands)
    if result.verdict == "baseline-established" and run is not None:
        commands.notice(
            f"Baseline established in {run.baseline.name}; commit it in a following step "
            "to gate later changes against it."
        )
    if commit.default_branch_push and result.metrics and run is not None and run.history:
        history = run.history
        append_history(
            history, commit=commit.sha, date=datetime.now(UTC), aggregates=result.metrics
        )
        commands.notice(f"Recorded this run in {history.name}; commit it in a following step.")
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
