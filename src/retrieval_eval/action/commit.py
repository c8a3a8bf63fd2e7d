"""Evaluate a commit (push, manual or scheduled run).

The baseline-null rule may write an established ``baseline.json`` into the
workspace, and a push to the default branch appends its numbers to
``retrieval-eval-history.jsonl`` beside it, and the README badge's
``retrieval-eval-badge.json`` (a shields.io endpoint) beside that; with
``baseline_update = "ratchet"`` a passing push to the default branch also raises
``baseline.json`` to its values. A regression on the default branch that a maintainer
accepted on the pull request it was merged from (``acceptance``) is ``accepted``: its
history line says who accepted it, and with the ratchet the baseline is set to its values,
the only way a baseline moves down without ``retrieval-eval baseline update``.
With ``[judged] enabled`` the judgments judged on the fly are written to the tier's
judgments file. All are left there for a following workflow step to commit (see
docs/action.md, "Keeping the baseline up to date"), which commits what the ``commit-files``
output names: the files the run changed, inside the repository. Before retrieval-eval
writes to them it checks that the evaluation left them as it should have
(``written_files``): the retriever ran in between.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from retrieval_eval.action.acceptance import (
    ACCEPTABLE,
    Acceptance,
    Refusal,
    acceptance_summary,
    accepted,
    check_merged_acceptance,
)
from retrieval_eval.action.deliver import deliver
from retrieval_eval.action.evaluation import Evaluated, failed, run_and_record
from retrieval_eval.action.event import CommitActivity
from retrieval_eval.action.github_api import GitHubApi
from retrieval_eval.action.inputs import ActionSettings
from retrieval_eval.action.plan import RunPlan
from retrieval_eval.action.pull_request import final_exit_code
from retrieval_eval.action.runner_files import RunnerFiles
from retrieval_eval.action.written_files import Snapshot, changed_files, check
from retrieval_eval.compare.history import AcceptedBy, append_history
from retrieval_eval.results import DatasetReport, RunReport
from retrieval_eval.settings import RunSettings
from retrieval_eval.vocabulary import ExitCode


def run_commit(
    settings: ActionSettings,
    plan: RunPlan,
    commit: CommitActivity,
    api: GitHubApi,
    commands: RunnerFiles,
) -> ExitCode:
    run = plan.settings
    before = Snapshot.take(_left_for_commit(run) if run is not None else ())
    result = run_and_record(settings, plan, notices=(), write_baseline=True, commands=commands)
    if run is not None:
        tampered = check(
            before,
            baseline=run.baseline,
            report=_report(result),
            judgments=run.judged.judgments if run.judged.enabled else None,
        )
        if tampered is not None:
            result = failed(tampered, commands, settings, ())
    if result.verdict == "baseline-established" and run is not None:
        commands.notice(
            f"Baseline established in {run.baseline.name}; commit it in a following step "
            "to gate later changes against it."
        )
    acceptance = None
    if commit.default_branch_push and result.verdict in ACCEPTABLE:
        acceptance = _merged_acceptance(settings, commit, api, commands)
        if acceptance is not None:
            result = accepted(result, acceptance)
            commands.record(
                result.verdict,
                result.status_description,
                summary=acceptance_summary(result, acceptance),
            )
    if commit.default_branch_push and result.metrics and run is not None and run.history:
        history = run.history
        append_history(
            history,
            commit=commit.sha,
            date=datetime.now(UTC),
            aggregates=result.metrics,
            accepted=None
            if acceptance is None or acceptance.pull_request is None
            else AcceptedBy(acceptance.by, acceptance.pull_request, acceptance.label),
        )
        badge = _write_badge(history, result)
        also = f" and {badge.name}" if badge is not None else ""
        commands.notice(
            f"Recorded this run in {history.name}{also}; commit it in a following step."
        )
    if run is not None and acceptance is not None:
        _take_accepted(run, result, acceptance, commands)
    elif run is not None and run.baseline_update == "ratchet":
        _ratchet(run, commit, result, commands)
    _name_files_to_commit(before, settings.runner.workspace, commands)
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


def _left_for_commit(run: RunSettings) -> list[Path | None]:
    """What a push run may leave for the commit step: the baseline, the history and its
    badge, and the judged tier's judgments (judged on the fly: committed, the next pull
    request does not pay to judge them again)."""
    from retrieval_eval.render.badge import badge_path

    files: list[Path | None] = [run.baseline, run.history]
    if run.history is not None:
        files.append(badge_path(run.history))
    if run.judged.enabled:
        files.append(run.judged.judgments)
    return files


def _name_files_to_commit(before: Snapshot, workspace: Path, commands: RunnerFiles) -> None:
    """The ``commit-files`` output: what this run changed for the commit step to commit,
    inside the repository only."""
    inside, outside = changed_files(before, workspace)
    for path in outside:
        commands.warning(
            f"{path} is outside the repository: the commit step does not commit it",
            title="not committed",
        )
    commands.set_outputs({"commit-files": "\n".join(inside)})


def _merged_acceptance(
    settings: ActionSettings, commit: CommitActivity, api: GitHubApi, commands: RunnerFiles
) -> Acceptance | None:
    """The acceptance of the pull request this push merged, checked as its own runs check it
    (asked of GitHub on this run: the label still on it, a writer's, added on its last head)."""
    found = check_merged_acceptance(api, commit.sha, settings.accept_label, settings.status_context)
    if isinstance(found, Refusal):
        commands.warning(found.reason, title="regression not accepted")
        return None
    return found


def _take_accepted(
    run: RunSettings, result: Evaluated, acceptance: Acceptance, commands: RunnerFiles
) -> None:
    """The accepted values become the baseline through the baseline workflow's ratchet; a
    fixed baseline stays, and the log says how to move it."""
    from retrieval_eval.compare.baseline import (
        baseline_entry,
        load_baseline,
        updated_baseline,
        write_baseline,
    )

    path = run.baseline
    where = f"#{acceptance.pull_request}"
    if run.baseline_update != "ratchet":
        commands.notice(
            f"baseline-update: {run.baseline_update} leaves {path.name} as it is, although "
            f"{acceptance.by} accepted the regression {where} brought. To gate later pull "
            f"requests against the accepted values, run `retrieval-eval baseline update` on "
            f"the default branch and commit {path.name}."
        )
        return
    report = _report(result)
    if report is None:
        return
    previous = load_baseline(path)
    accepted_values = updated_baseline(
        previous, report.datasets, environment=report.environment, k=report.k
    )
    tier = _gating_tier(report)
    if tier is not None:  # its values are accepted as the human datasets' are
        accepted_values = accepted_values.model_copy(
            update={"judged_tier": baseline_entry(tier, k=report.k)}
        )
    write_baseline(path, accepted_values)
    commands.notice(
        f"Set {path.name} to this run's values: {acceptance.by} accepted the regression "
        f"{where} brought (label {acceptance.label!r}); commit it in a following step."
    )


def _gating_tier(report: RunReport) -> DatasetReport | None:
    """The judged tier's report while it took part in the verdict: only then do its numbers
    move the baseline (an uncalibrated judge's numbers decide nothing)."""
    tier = report.judged_tier
    return tier.report if tier is not None and tier.gates else None


def _report(result: Evaluated) -> RunReport | None:
    if result.report_json is None:
        return None
    try:
        return RunReport.model_validate_json(result.report_json.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _write_badge(history: Path, result: Evaluated) -> Path | None:
    """The shields.io endpoint JSON beside the history: the headline metric and verdict."""
    from retrieval_eval.fileio import atomic_write_text
    from retrieval_eval.render.badge import badge_json, badge_path
    from retrieval_eval.results import RunReport

    if result.report_json is None:
        return None
    report = RunReport.model_validate_json(result.report_json.read_text(encoding="utf-8"))
    path = badge_path(history)
    # An accepted regression is the Action's verdict, not the report's: the badge says it.
    atomic_write_text(path, badge_json(report.model_copy(update={"verdict": result.verdict})))
    return path


def _ratchet(
    run: RunSettings, commit: CommitActivity, result: Evaluated, commands: RunnerFiles
) -> None:
    """Raise the baseline to a passing run's values; only a push to the default branch may."""
    from retrieval_eval.compare.baseline import load_baseline, write_baseline
    from retrieval_eval.compare.policy import gate_policy
    from retrieval_eval.compare.ratchet import ratchet_baseline
    from retrieval_eval.render.baseline_notices import ratchet_log, ratchet_summary
    from retrieval_eval.results import RunReport

    path = run.baseline
    if not commit.default_branch_push:
        commands.info(
            f"baseline-update: ratchet leaves {path.name} alone: not a push to the default branch."
        )
        return
    if result.verdict != "passed" or result.report_json is None:
        commands.info(
            f"baseline-update: ratchet leaves {path.name} alone: the run's verdict is "
            f"{result.verdict}, and only a passing run raises the baseline."
        )
        return
    report = RunReport.model_validate_json(result.report_json.read_text(encoding="utf-8"))
    previous = load_baseline(path)
    if previous is None:
        return
    ratchet = ratchet_baseline(
        previous,
        report.datasets,
        environment=report.environment,
        k=report.k,
        policy=gate_policy(run),
        tier=_gating_tier(report),
    )
    commands.append_summary(ratchet_summary(ratchet.moved, ratchet.held, baseline_name=path.name))
    for held in ratchet.held:
        commands.warning(f"{held.dataset} was not ratcheted: {held.reason}", title="baseline held")
    if not ratchet.moved:
        commands.info(f"baseline-update: ratchet: no metric beat {path.name}; it is unchanged.")
        return
    write_baseline(path, ratchet.baseline)
    commands.notice(ratchet_log(ratchet.moved, baseline_name=path.name))
