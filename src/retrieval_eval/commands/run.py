"""`retrieval-eval run`: evaluate the datasets, gate against the baseline, print the report."""

from __future__ import annotations

import math
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import click
from pydantic import SecretStr

from retrieval_eval.commands.progress_flag import progress_option, show_progress
from retrieval_eval.config import flags as config_flags
from retrieval_eval.config.flags import overrides_from_flags, settings_flags, typed_paths
from retrieval_eval.pipeline import RunOutcome
from retrieval_eval.prepare import Prepared, prepared_run
from retrieval_eval.render.terminal import terminal_summary
from retrieval_eval.settings import CONFIG_FILE_NAME, RunSettings
from retrieval_eval.sharding import parse_shard
from retrieval_eval.usecases.evaluate import run_evaluation
from retrieval_eval.usecases.shards import evaluate_shard
from retrieval_eval.vocabulary import BREACHED


def settings_options(name: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """The flags of `run`, `baseline update`, `embed` and `merge` (``name``): --config, the
    settings flags the option table declares for the command, and --progress."""

    def decorate(command: Callable[..., Any]) -> Callable[..., Any]:
        return config_flags.config_option(settings_flags(name)(progress_option(command)))

    return decorate


@contextmanager
def prepared_from_flags(flags: dict[str, Any]) -> Iterator[Prepared]:
    """The one preparation (``retrieval_eval.prepare``) from the shared flags.

    A path typed on the command line is the user's own choice: reading it (and writing
    it) is allowed wherever it is. Paths from the configuration file must stay inside the
    repository."""
    with prepared_run(
        workdir=Path.cwd(),
        config_file=flags.get("config_file"),
        overrides=overrides_from_flags(flags),
        typed_inputs=typed_paths(flags, "read"),
        typed_outputs=typed_paths(flags, "written", "atomic"),
    ) as ready:
        yield ready


def anthropic_api_key() -> SecretStr | None:
    """The judge's key comes only from the environment: config files get committed."""
    value = os.environ.get("ANTHROPIC_API_KEY", "").strip()
    return SecretStr(value) if value else None


def report_outcome(
    outcome: RunOutcome,
    *,
    print_report: bool,
    markdown: bool | None = None,
    settings: RunSettings | None = None,
) -> None:
    """Problems and errors on stderr; the report on stdout: on a terminal a summary
    (``markdown`` prints report.md instead; None: the command has no such flag),
    elsewhere report.md's text, which scripts read.
    Then what to do next, when the verdict asks for something."""
    here = Path.cwd()
    for problem in outcome.problems:
        click.echo(f"{_shown(problem.file, here)}:{problem.line}: {problem.message}", err=True)
    if outcome.error is not None:
        click.echo(f"error: {outcome.error}", err=True)
    if print_report and outcome.markdown is not None:
        if markdown or outcome.report is None or not sys.stdout.isatty():
            click.echo(outcome.markdown, nl=False)
        else:
            shown = _shown(outcome.report_markdown, here) if outcome.report_markdown else None
            hint = "--markdown prints it" if markdown is not None else ""
            summary = terminal_summary(
                outcome.report, report_markdown=shown, color=use_color(), hint=hint
            )
            click.echo(summary, nl=False, color=use_color())
    if outcome.report_json is not None:
        click.echo(
            f"report: {outcome.report_json}, {outcome.report_markdown} and {outcome.report_html}",
            err=True,
        )
    if outcome.error is None:  # an error's status line would repeat the `error:` line
        click.echo(outcome.status_description, err=True)
    for line in next_steps(outcome, settings, here):
        click.echo(line, err=True)


def use_color() -> bool:
    """Colour on a terminal unless NO_COLOR is set to anything non-empty (no-color.org)."""
    return not os.environ.get("NO_COLOR") and sys.stdout.isatty()


def next_steps(outcome: RunOutcome, settings: RunSettings | None, here: Path) -> list[str]:
    """What the user does after this verdict, as commands and snippets to copy."""
    report = outcome.report
    if outcome.verdict == "baseline-established" and outcome.baseline_written:
        files = [settings.baseline, settings.history] if settings is not None else []
        shown = [_shown(f, here) for f in files if f is not None and f.is_file()] or [
            Path("baseline.json")
        ]
        names = " ".join(str(f) for f in shown)
        return [
            f"next: commit {' and '.join(str(f) for f in shown)}: pull requests are gated "
            f"against the committed baseline",
            f'  git add {names} && git commit -m "Record the retrieval baseline"',
        ]
    if outcome.verdict == "threshold" and report is not None:
        lines: list[str] = []
        for dataset in report.datasets:
            rows = [r for r in dataset.rows if r.status in BREACHED]
            if not rows:
                continue
            if not lines:
                lines.append(
                    "next: if a bound does not fit a dataset, give that file its own in "
                    f"{CONFIG_FILE_NAME} (`false` removes it; docs/configuration.md):"
                )
            lines.append(f'  [dataset_thresholds."{_toml_key(dataset.name)}"]')
            for row in rows:
                bound = "max" if row.status == "above-ceiling" else "min"
                # Rounded away from the bar at the precision the report shows the metric in.
                scale = 10 ** (
                    4 if row.metric.endswith("_usd") else 1 if row.metric.endswith("_ms") else 2
                )
                rounding = math.ceil if bound == "max" else math.floor
                value = rounding(row.current * scale) / scale
                lines.append(f'  "{_toml_key(row.metric)}" = {{ {bound} = {value:g} }}')
        return lines
    if outcome.verdict == "invalid":
        messages = " ".join(p.message for p in outcome.problems)
        lines = [
            "next: fix the lines above; `retrieval-eval validate` checks them again in seconds"
        ]
        if "human-annotated fixtures; at least" in messages:
            lines.append(
                "  too few human-annotated: `retrieval-eval review FILE` marks the ones you check"
            )
        if "valid fixtures; at least" in messages:
            lines.append(
                "  too few fixtures: `retrieval-eval generate --append` adds synthetic ones "
                "to review"
            )
        return lines
    return []


def _toml_key(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"')


def _shown(path: Path, here: Path) -> Path:
    # Paths relative to where the user stands, as editors and CI logs link them.
    return path.relative_to(here) if path.is_relative_to(here) else path


@click.command("run")
@settings_options("run")
@click.option(
    "--quiet", is_flag=True, help="Do not print the report (the files are still written)."
)
@click.option(
    "--markdown",
    is_flag=True,
    help="Print report.md on a terminal too, instead of the summary (it is what is printed "
    "when stdout is not a terminal).",
)
@click.option(
    "--shard",
    metavar="I/N",
    help="Evaluate only shard I of N of the queries (chosen by hash of the query id) and "
    "write a partial result (partial.json) into --report-dir; `retrieval-eval merge` "
    "combines the N partials into the report.",
)
def run(quiet: bool, markdown: bool, progress: bool | None, shard: str | None, **flags: Any) -> int:
    """Evaluate every dataset, compare with the baseline and write the report.

    Exit 0: passed (or baseline established). 1: a metric regressed, a threshold
    was breached, or the datasets are invalid. 2: an error.
    """
    with prepared_from_flags(flags) as ready:
        if shard is not None:
            return run_one_shard(ready.settings, shard, progress=show_progress(progress))
        outcome = run_evaluation(
            ready.settings, progress=show_progress(progress), anthropic_api_key=anthropic_api_key()
        )
    report_outcome(outcome, print_report=not quiet, markdown=markdown, settings=ready.settings)
    return int(outcome.exit_code)


def run_one_shard(settings: RunSettings, shard_text: str, *, progress: bool) -> int:
    outcome = evaluate_shard(
        settings, parse_shard(shard_text), progress=progress, anthropic_api_key=anthropic_api_key()
    )
    if outcome.invalid is not None:
        report_outcome(outcome.invalid, print_report=False)
        return int(outcome.exit_code)
    click.echo(outcome.summary, err=True)
    return int(outcome.exit_code)
