"""`retrieval-eval embed [--shard I/N]`: embed the corpus into the cache ahead of a run."""

from __future__ import annotations

from typing import Any

import click

from retrieval_eval.commands.progress_flag import show_progress
from retrieval_eval.commands.run import prepared_from_flags, settings_options
from retrieval_eval.sharding import parse_shard
from retrieval_eval.usecases.shards import embed_shard
from retrieval_eval.vocabulary import ExitCode


@click.command("embed")
@settings_options("embed")
@click.option(
    "--shard",
    metavar="I/N",
    help="Embed only shard I of N of the chunks (chosen by hash of the chunk text, so "
    "stable when documents are added). `retrieval-eval cache merge` unions the shards.",
)
def embed(progress: bool | None, shard: str | None, **flags: Any) -> int:
    """Embed the corpus's dense chunks into the embedding cache (--cache-dir).

    A later `run` with the same corpus, chunking and model embeds nothing.
    """
    chosen = parse_shard(shard) if shard is not None else None
    with prepared_from_flags(flags) as ready:
        summary = embed_shard(ready.settings, chosen, progress=show_progress(progress))
    part = f"shard {chosen}: " if chosen is not None else ""
    click.echo(
        f"{part}{summary.selected} of {summary.chunks} chunks: {summary.embedded} embedded, "
        f"{summary.cached} already cached (model sha256 {summary.model_sha256[:12]}) "
        f"in {ready.settings.cache_dir}",
        err=True,
    )
    return int(ExitCode.OK)
