"""`run --shard I/N` and `retrieval-eval merge`: one evaluation across a CI matrix."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from retrieval_eval.commands.run import (
    anthropic_api_key,
    report_outcome,
    settings_from_flags,
    settings_options,
)
from retrieval_eval.pipeline import merge_shards, run_shard
from retrieval_eval.settings import RunSettings
from retrieval_eval.sharding import parse_shard


def run_one_shard(settings: RunSettings, shard_text: str, *, progress: bool) -> int:
    outcome = run_shard(
        settings, parse_shard(shard_text), progress=progress, anthropic_api_key=anthropic_api_key()
    )
    if outcome.invalid is not None:
        report_outcome(outcome.invalid, print_report=False)
        return int(outcome.exit_code)
    click.echo(outcome.summary, err=True)
    return int(outcome.exit_code)


@click.command("merge")
@settings_options
@click.option("--quiet", is_flag=True, help="Do not print the report.")
@click.argument(
    "shard_dirs",
    nargs=-1,
    required=True,
    type=click.Path(exists=True, file_okay=False, path_type=Path),
)
def merge(quiet: bool, progress: bool | None, shard_dirs: tuple[Path, ...], **flags: Any) -> int:
    """Combine the partial results of `run --shard I/N` (one folder per shard) into one
    report in --report-dir, gated once against the baseline.

    Exits as `run` would: 0 passed, 1 regression/threshold, 2 an error — including
    partials of different datasets, corpus, configuration or model, and a missing or
    repeated shard.
    """
    settings = settings_from_flags(flags)
    outcome = merge_shards(settings, shard_dirs)
    report_outcome(outcome, print_report=not quiet)
    return int(outcome.exit_code)
