"""`retrieval-eval cache merge`: union the embedding caches of parallel jobs."""

from __future__ import annotations

from pathlib import Path

import click

from retrieval_eval.commands.model import installed_model_dir, model_dir_option
from retrieval_eval.index.cache_merge import merge_caches
from retrieval_eval.index.model_install import verify_model
from retrieval_eval.vocabulary import ExitCode


@click.group("cache")
def cache_group() -> None:
    """Work with embedding caches (the folders given as --cache-dir)."""


@cache_group.command("merge")
@click.option(
    "--into",
    "target",
    required=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="The --cache-dir to merge into (created if missing).",
)
@model_dir_option(
    "--model-dir",
    help="The model the caches must have been built with. Default: the installed model.",
)
@click.argument(
    "shard_dirs",
    nargs=-1,
    required=True,
    type=click.Path(exists=True, file_okay=False, path_type=Path),
)
def merge(target: Path, model_dir: Path | None, shard_dirs: tuple[Path, ...]) -> int:
    """Add every vector of the SHARD_DIRS caches (each a --cache-dir of `embed --shard`)
    to the cache in --into. Merging twice changes nothing; a cache that holds vectors of
    another model is refused, so a run can never mix two models' vectors."""
    model = verify_model(model_dir if model_dir is not None else installed_model_dir())
    merged = merge_caches(target, shard_dirs, model)
    for warning in merged.warnings:
        click.echo(f"warning: {warning}", err=True)
    click.echo(
        f"merged {merged.sources} cache(s) into {target}: {merged.added} new vectors, "
        f"{merged.total} in all",
        err=True,
    )
    return int(ExitCode.OK)
