"""`retrieval-eval embed [--shard I/N]`: embed the corpus into the cache ahead of a run."""

from __future__ import annotations

from typing import Any

import click

from retrieval_eval.commands.progress_flag import show_progress
from retrieval_eval.commands.run import prepared_from_flags, settings_options
from retrieval_eval.compare.baseline import models_recorded_at
from retrieval_eval.compare.dense_model import choose_run_model
from retrieval_eval.load.corpus import load_corpus
from retrieval_eval.progress import stderr_log, step
from retrieval_eval.retrieval.builtin.embed_shard import embed_into_cache
from retrieval_eval.sharding import parse_shard
from retrieval_eval.vocabulary import ExitCode


@click.command("embed")
@settings_options
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
        corpus = load_corpus(ready.settings.corpus)
        # The whole corpus chooses the model, as `run` and every shard of it do.
        settings, _ = choose_run_model(
            ready.settings, corpus, models_recorded_at(ready.settings.baseline), stderr_log
        )
        with step(
            "embedding",
            None,
            interactive=show_progress(progress),
            log=stderr_log,
            unit="text",
            pace=settings.progress.pace(),
        ) as tracker:
            summary = embed_into_cache(
                corpus,
                settings.retrievers.dense,
                chosen,
                lambda done, total: tracker.update(done, total),
            )
    part = f"shard {chosen}: " if chosen is not None else ""
    click.echo(
        f"{part}{summary.selected} of {summary.chunks} chunks: {summary.embedded} embedded, "
        f"{summary.cached} already cached (model sha256 {summary.model_sha256[:12]}) "
        f"in {settings.cache_dir}",
        err=True,
    )
    return int(ExitCode.OK)
