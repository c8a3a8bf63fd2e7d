"""Run the core evaluation for the Action and put its results where the runner shows them.

This is the only module of the Action that calls the evaluation's use cases (one
evaluation, the merge of shards) and the renderer. It
writes the step summary, outputs and annotations *before* anything is posted to
GitHub, so a failing API can never hide the results.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from retrieval_eval.action.comment import room_for_report
from retrieval_eval.action.inputs import ActionSettings
from retrieval_eval.action.plan import RunPlan
from retrieval_eval.action.runner_files import RunnerFiles
from retrieval_eval.errors import ConfigError, RetrievalEvalError
from retrieval_eval.prepare import within_roots
from retrieval_eval.vocabulary import ExitCode, fit_status_description

# The runner refuses a step's job summary over 1 MiB (bytes, not characters); the margin
# leaves room for a failure note appended after the report.
SUMMARY_MAX_BYTES = 1_000_000


@dataclass(frozen=True)
class Evaluated:
    verdict: str
    exit_code: ExitCode
    comment_markdown: str  # capped to fit a comment with our marker
    status_description: str
    report_json: Path | None
    report_markdown: Path | None
    metrics: dict[str, dict[str, float]]
    report_html: Path | None = None


def run_and_record(
    settings: ActionSettings,
    plan: RunPlan,
    *,
    notices: Sequence[str],
    write_baseline: bool,
    commands: RunnerFiles,
    baseline: Path | None = None,
    stale: str | None = None,
) -> Evaluated:
    """Never raises for a failed evaluation: that is a verdict (``error``) to report and post.

    ``baseline`` is the file gated against when it is not the plan's own: on a pull request
    a scratch copy of the base commit's, never written; the history (it only draws the
    sparklines) stays the workspace's. ``stale``: the baseline is behind the default
    branch, in words for a passing headline.
    """
    # Imported here: the Action's settings and event handling must work (and fail clearly)
    # without paying for chromadb and onnxruntime.
    from retrieval_eval.render.markdown import render_markdown, utf8_bytes
    from retrieval_eval.render.summary_charts import summary_charts
    from retrieval_eval.trust.crash import format_traceback, unexpected_error
    from retrieval_eval.usecases.evaluate import run_evaluation
    from retrieval_eval.usecases.shards import merge_shards

    if plan.config_error is not None:
        return failed(plan.config_error, commands, settings, notices)
    run_settings = own = plan.require()
    if baseline is not None and baseline.resolve() != run_settings.baseline:
        run_settings = run_settings.model_copy(update={"baseline": baseline.resolve()})
    try:
        # The use case runs within `time_limit_s` (usecases/time_bound.py).
        with commands.group("Evaluation"), within_roots(run_settings):
            if settings.mode == "merge":
                outcome = merge_shards(
                    run_settings,
                    shard_report_folders(settings.shard_artifacts),
                    notices=notices,
                    write_baseline=write_baseline,
                    links=plan.links,
                    stale=stale,
                )
            else:
                outcome = run_evaluation(
                    run_settings,
                    progress=False,
                    notices=notices,
                    write_baseline=write_baseline,
                    anthropic_api_key=settings.runner.anthropic_api_key,
                    links=plan.links,
                    stale=stale,
                )
    except RetrievalEvalError as error:
        _name_as_in_repository(error, run_settings.baseline, own.baseline)
        return failed(error, commands, settings, notices)
    except BaseException as error:  # whatever it is, the run still ends with a status
        if isinstance(error, KeyboardInterrupt):
            raise
        if settings.runner.debug:
            commands.info(format_traceback(error))
        return failed(unexpected_error(error), commands, settings, notices)

    if outcome.error is not None and _name_as_in_repository(
        outcome.error, run_settings.baseline, own.baseline
    ):
        outcome = replace(
            outcome, status_description=fit_status_description(f"error: {outcome.error}")
        )
    for problem in outcome.problems:
        _annotate(problem, commands, settings.runner.workspace)
    if outcome.error is not None:
        commands.relay("retrieval-eval's error, as reported", str(outcome.error))
        commands.error(str(outcome.error), file=outcome.error.shown_file, line=outcome.error.line)
    for warning in outcome.warnings:
        commands.warning(warning)
    if outcome.report is not None:
        # The report, then its charts (Mermaid: what GitHub draws in a job summary).
        charts = summary_charts(outcome.report)
        summary = render_markdown(
            outcome.report,
            max_chars=SUMMARY_MAX_BYTES - utf8_bytes(charts),
            notices=notices,
            full=outcome.markdown,
            size=utf8_bytes,
            links=plan.links,
        )
        summary += f"\n{charts}" if charts else ""
        comment = render_markdown(
            outcome.report,
            max_chars=room_for_report(settings.comment_id),
            notices=notices,
            full=outcome.markdown,
            links=plan.links,
        )
    else:
        summary = comment = _no_report_markdown(outcome, notices, settings.runner.workspace)
    result = Evaluated(
        verdict=outcome.verdict,
        exit_code=outcome.exit_code,
        comment_markdown=comment,
        status_description=fit_status_description(outcome.status_description),
        report_json=outcome.report_json,
        report_markdown=outcome.report_markdown,
        metrics=outcome.metrics,
        report_html=outcome.report_html,
    )
    record_results(commands, result, summary)
    return result


def _name_as_in_repository(error: RetrievalEvalError, scratch: Path, repository: Path) -> bool:
    """The base commit's baseline is read from a scratch copy outside the workspace: an error
    in it names the file as the repository does (and says which version), not the runner's
    temporary path. True when ``error`` was renamed."""
    if scratch == repository or error.file != str(scratch):
        return False
    error.file = str(repository)
    error.message += " (in the base commit's version)"
    return True


def _no_report_markdown(outcome: Any, notices: Sequence[str], workspace: Path) -> str:
    """Invalid datasets or a failed run produce no report; say what went wrong instead."""
    from retrieval_eval.render.no_report import no_report_markdown

    return no_report_markdown(
        verdict=outcome.verdict,
        description=outcome.status_description,
        problems=outcome.problems,
        error=outcome.error,
        notices=notices,
        workspace=workspace,
    )


def _annotate(problem: Any, commands: RunnerFiles, workspace: Path) -> None:
    """Annotations need repository-relative paths to show up on the right line of the diff."""
    file = getattr(problem, "file", None)
    if file is not None:
        path = Path(str(file))
        if path.is_absolute() and path.is_relative_to(workspace):
            file = path.relative_to(workspace).as_posix()
    commands.error(
        str(getattr(problem, "message", problem)),
        file=str(file) if file else None,
        line=getattr(problem, "line", None),
    )


def failed(
    error: RetrievalEvalError,
    commands: RunnerFiles,
    settings: ActionSettings,
    notices: Sequence[str],
) -> Evaluated:
    """A run that could not evaluate still reports, and still gets an ``error`` status."""
    from retrieval_eval.render.no_report import no_report_markdown, shown_path

    # The message can quote what a retriever printed: in full in the log, where the runner
    # reads no command in it, then as the one-line annotation.
    commands.relay("retrieval-eval's error, as reported", str(error))
    commands.error(str(error), file=error.shown_file, line=error.line)
    # The status has 140 characters: name the file as the repository does, not the runner.
    where = ""
    if error.file is not None:
        where = shown_path(error.file, settings.runner.workspace)
        where += f":{error.line}: " if error.line is not None else ": "
    markdown = no_report_markdown(
        verdict="error",
        description="retrieval-eval could not evaluate:",
        error=error,
        notices=notices,
        workspace=settings.runner.workspace,
    )
    result = Evaluated(
        verdict="error",
        exit_code=ExitCode.ERROR,
        comment_markdown=markdown,
        status_description=fit_status_description(f"error: {where}{error.message}"),
        report_json=None,
        report_markdown=None,
        metrics={},
    )
    record_results(commands, result, markdown)
    return result


def record_results(commands: RunnerFiles, result: Evaluated, summary_markdown: str) -> None:
    commands.record(
        result.verdict,
        result.status_description,
        summary=summary_markdown,
        outputs={
            "report-json": str(result.report_json or ""),
            "report-markdown": str(result.report_markdown or ""),
            "report-html": str(result.report_html or ""),
            "metrics": json.dumps(result.metrics, separators=(",", ":"), sort_keys=True),
        },
    )


def shard_report_folders(folder: Path | None) -> list[Path]:
    """The folders of ``shard-artifacts`` that hold a shard's partial result."""
    if folder is None:
        raise ConfigError("input `shard-artifacts` is required with `mode: merge`")
    from retrieval_eval.compare.partial import PARTIAL_FILE

    found = sorted(path.parent for path in folder.glob(f"*/{PARTIAL_FILE}"))
    if not found:
        # Every shard job failed or uploaded nothing; a failed shard's artifact is simply
        # absent, so this is the one place the merge job can say so.
        raise ConfigError(
            f"{folder.as_posix()}: no shard's partial result is there (a subfolder with "
            f"`{PARTIAL_FILE}`, one per `evaluate-shard` job); check that those jobs "
            "succeeded and uploaded their `report-dir`"
        )
    return found
