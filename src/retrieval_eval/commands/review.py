"""`retrieval-eval review FILE`: accept, fix or reject synthetic fixtures one at a time
(``retrieval_eval.usecases.review``)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from retrieval_eval.author.review import Console
from retrieval_eval.commands.run import use_color
from retrieval_eval.config.flags import (
    config_option,
    overrides_from_flags,
    settings_flags,
    typed_paths,
)
from retrieval_eval.prepare import prepared_run
from retrieval_eval.retrieval.registry import RETRIEVER_NAMES
from retrieval_eval.usecases.review import review_dataset, review_holes
from retrieval_eval.vocabulary import ExitCode


@click.command("review")
@click.argument(
    "dataset", required=False, type=click.Path(exists=True, dir_okay=False, path_type=Path)
)
@click.option(
    "--holes",
    "holes_report",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Instead of a dataset: review the unlabelled documents that newly entered the top k "
    "of this report.json's regressed queries; accepting one adds it to the expected ids.",
)
@click.option(
    "--retriever",
    "retriever_name",
    type=click.Choice(RETRIEVER_NAMES),
    help="Retriever whose top 5 is shown. Default: the one the config file maps "
    "this dataset file to.",
)
@config_option
@click.option("--include-skipped", is_flag=True, help="Show fixtures skipped earlier again.")
@settings_flags("review")
def review(
    dataset: Path | None,
    holes_report: Path | None,
    retriever_name: str | None,
    config_file: Path | None,
    include_skipped: bool,
    **flags: Any,
) -> int:
    """Review DATASET's synthetic fixtures: accepting one marks it human-annotated.

    Every decision is written to the file at once; quit at any time (x, or end of
    input) and run the command again to resume where you left off.
    """
    if holes_report is not None:
        if dataset is not None:
            raise click.UsageError("give a DATASET or --holes REPORT, not both")
        return _review_holes(holes_report, config_file, include_skipped, flags)
    if dataset is None:
        raise click.UsageError("give the DATASET file to review (or --holes report.json)")
    with prepared_run(
        workdir=Path.cwd(),
        config_file=config_file,
        overrides=overrides_from_flags(flags),
        typed_inputs=(dataset, *typed_paths(flags, "read")),
    ) as ready:
        reviewed = review_dataset(
            ready.settings,
            dataset,
            _console(),
            retriever_name=retriever_name,
            include_skipped=include_skipped,
        )
    t = reviewed.tally
    if t is None:
        click.echo(f"{dataset}: nothing to review (no synthetic fixtures left)")
        return int(ExitCode.OK)
    left = reviewed.left
    click.echo(
        f"\n{t.accepted} accepted, {t.rejected} rejected, {t.skipped} skipped"
        f" ({t.edited} edited); "
        + (f"{left} left to review: run the same command to resume" if left else "all reviewed")
    )
    return int(ExitCode.OK)


def _review_holes(
    report_path: Path, config_file: Path | None, include_skipped: bool, flags: dict[str, Any]
) -> int:
    with prepared_run(
        workdir=Path.cwd(),
        config_file=config_file,
        overrides=overrides_from_flags(flags),
        typed_inputs=(report_path, *typed_paths(flags, "read")),
    ) as ready:
        reviewed = review_holes(
            ready.settings, report_path, _console(), include_skipped=include_skipped
        )
    if reviewed is None:
        click.echo(f"{report_path}: no unlabelled documents entered a regressed query's top k")
        return int(ExitCode.OK)
    t = reviewed.tally
    if t is None:
        click.echo(f"{report_path}: every hole is decided (accepted, rejected or skipped)")
        return int(ExitCode.OK)
    left = reviewed.left
    click.echo(
        f"\n{t.accepted} accepted, {t.rejected} rejected, {t.skipped} skipped; "
        + (f"{left} left: run the same command to resume" if left else "all reviewed")
    )
    if t.accepted:
        click.echo("next: retrieval-eval run scores the queries with their new labels")
    return int(ExitCode.OK)


def _console() -> Console:
    def ask(prompt: str) -> str:
        shown = click.style(prompt, bold=True) if use_color() else prompt  # NO_COLOR
        click.echo(shown + " > ", nl=False)
        line = sys.stdin.readline()
        if not line:
            click.echo("")
            raise EOFError
        return line.rstrip("\n")

    return Console(echo=click.echo, ask=ask)
