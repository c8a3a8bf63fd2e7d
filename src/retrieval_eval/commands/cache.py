"""`retrieval-eval cache merge`: union the embedding caches of parallel jobs."""

from __future__ import annotations

from pathlib import Path

import click

from retrieval_eval.errors import InputError
from retrieval_eval.index.embedding_cache import CACHE_FILE, EMBEDDINGS_SUBDIR, EmbeddingCache
from retrieval_eval.index.model_install import default_model_dir, verify_model
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
    "--model-dir",
    type=click.Path(file_okay=False, path_type=Path),
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
    model_sha256 = verify_model(
        model_dir if model_dir is not None else default_model_dir(Path.home())
    )
    sources = []
    for shard_dir in shard_dirs:
        path = shard_dir / EMBEDDINGS_SUBDIR / CACHE_FILE
        if not path.is_file():
            raise InputError(
                f"no embedding cache here (expected {EMBEDDINGS_SUBDIR}/{CACHE_FILE}); give the "
                "--cache-dir of `retrieval-eval embed`",
                file=shard_dir,
            )
        with EmbeddingCache(path.parent) as shard_cache:
            others = shard_cache.models() - {model_sha256}
        if others:
            raise InputError(
                f"holds vectors of another model (sha256 {', '.join(sorted(others))}), not of "
                f"the installed model {model_sha256}: rebuild this shard with the same model",
                file=path,
            )
        sources.append(path)
    added = 0
    with EmbeddingCache(target / EMBEDDINGS_SUBDIR) as cache:
        for path in sources:
            added += cache.merge_from(path)
        total = len(cache)
    click.echo(
        f"merged {len(sources)} cache(s) into {target}: {added} new vectors, {total} in all",
        err=True,
    )
    return int(ExitCode.OK)
