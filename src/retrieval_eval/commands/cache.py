"""`retrieval-eval cache merge`: union the embedding caches of parallel jobs."""

from __future__ import annotations

from pathlib import Path

import click

from retrieval_eval.commands.model import installed_model_dir, model_dir_option
from retrieval_eval.index.cache_merge import cached_models, merge_caches
from retrieval_eval.index.model_catalog import (
    AUTO_CHOICES,
    AUTO_MODEL,
    DEFAULT_MODEL,
    INT8_MODEL,
    MODELS,
    model_spec,
)
from retrieval_eval.index.model_install import BUILT_SHA256, model_folder, verify_model_of
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
@click.option(
    "--model",
    "model_name",
    default=AUTO_MODEL,
    show_default=True,
    type=click.Choice([AUTO_MODEL, *MODELS]),
    help="The model the caches must have been built with ([retrievers.dense] model). "
    f"{AUTO_MODEL}: {DEFAULT_MODEL} or {INT8_MODEL}, whichever the caches hold, as "
    "`embed` chose it for the corpus.",
)
@model_dir_option(
    "--model-dir",
    help="That model's folder. Default: where `retrieval-eval model install` put it.",
)
@click.argument(
    "shard_dirs",
    nargs=-1,
    required=True,
    type=click.Path(exists=True, file_okay=False, path_type=Path),
)
def merge(
    target: Path, model_name: str, model_dir: Path | None, shard_dirs: tuple[Path, ...]
) -> int:
    """Add every vector of the SHARD_DIRS caches (each a --cache-dir of `embed --shard`)
    to the cache in --into. Merging twice changes nothing; a cache that holds vectors of
    another model is refused, so a run can never mix two models' vectors."""
    if model_name == AUTO_MODEL:
        held = cached_models(shard_dirs)
        model_name = next((n for n in AUTO_CHOICES if BUILT_SHA256[n] in held), DEFAULT_MODEL)
    spec = model_spec(model_name)
    folder = model_dir if model_dir is not None else model_folder(installed_model_dir(), spec)
    model = verify_model_of(folder, spec)
    merged = merge_caches(target, shard_dirs, model, spec)
    for warning in merged.warnings:
        click.echo(f"warning: {warning}", err=True)
    click.echo(
        f"merged {merged.sources} cache(s) into {target}: {merged.added} new vectors, "
        f"{merged.total} in all",
        err=True,
    )
    return int(ExitCode.OK)
