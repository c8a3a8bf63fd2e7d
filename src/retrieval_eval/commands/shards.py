"""`retrieval-eval merge`: combine the partial results of `run --shard I/N` (commands/run.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from retrieval_eval.commands.run import prepared_from_flags, report_outcome, settings_options
from retrieval_eval.usecases.shards import merge_shards


@click.command("merge")
@settings_options("merge")
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
    with prepared_from_flags(flags) as ready:
        outcome = merge_shards(ready.settings, shard_dirs)
    report_outcome(outcome, print_report=not quiet, settings=ready.settings)
    return int(outcome.exit_code)
