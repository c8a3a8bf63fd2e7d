"""`retrieval-eval baseline update`: rewrite the baseline from a fresh run, deliberately."""

from __future__ import annotations

from typing import Any

import click

from retrieval_eval.commands.progress_flag import show_progress
from retrieval_eval.commands.run import (
    anthropic_api_key,
    prepared_from_flags,
    report_outcome,
    settings_options,
)
from retrieval_eval.usecases.baseline import update_baseline
from retrieval_eval.vocabulary import ExitCode


@click.group("baseline")
def baseline_group() -> None:
    """Manage the committed baseline."""


@baseline_group.command("update")
@settings_options("baseline update")
def update(progress: bool | None, **flags: Any) -> int:
    """Evaluate every dataset and replace the baseline with the results.

    The old baseline is not read (a corrupt one is simply replaced). Absolute
    thresholds are still reported; they do not stop the rewrite.
    """
    with prepared_from_flags(flags) as ready:
        outcome = update_baseline(
            ready.settings, progress=show_progress(progress), anthropic_api_key=anthropic_api_key()
        )
    report_outcome(outcome, print_report=False, settings=ready.settings)
    if outcome.exit_code == ExitCode.OK:
        click.echo(f"baseline rewritten: {ready.settings.baseline}", err=True)
    return int(outcome.exit_code)
