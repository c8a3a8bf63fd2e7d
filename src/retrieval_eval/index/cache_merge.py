"""Union the embedding caches of parallel jobs into one, refusing another model's vectors.

Each folder is a run's ``--cache-dir`` (the vectors live in its ``embeddings/``
subfolder), which is exactly what a matrix job uploads as an artifact.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from retrieval_eval.errors import InputError
from retrieval_eval.index.embedding_cache import CACHE_FILE, EMBEDDINGS_SUBDIR, EmbeddingCache


@dataclass(frozen=True)
class MergedCaches:
    sources: int
    added: int  # vectors not already in the target
    total: int


def cache_file(cache_dir: Path) -> Path:
    return cache_dir / EMBEDDINGS_SUBDIR / CACHE_FILE


def merge_caches(target: Path, sources: Sequence[Path], model_sha256: str) -> MergedCaches:
    """Every source is checked before anything is written: a refused merge changes nothing."""
    files = []
    for source in sources:
        path = cache_file(source)
        if not path.is_file():
            raise InputError(
                f"no embedding cache here (expected {EMBEDDINGS_SUBDIR}/{CACHE_FILE}); give the "
                "--cache-dir of `retrieval-eval embed`",
                file=source,
            )
        with EmbeddingCache(path.parent) as shard_cache:
            others = shard_cache.models() - {model_sha256}
        if others:
            raise InputError(
                f"holds vectors of another model (sha256 {', '.join(sorted(others))}), not of "
                f"the model in use ({model_sha256}): rebuild this cache with the same model",
                file=path,
            )
        files.append(path)
    added = 0
    with EmbeddingCache(target / EMBEDDINGS_SUBDIR) as cache:
        for path in files:
            added += cache.merge_from(path)
        total = len(cache)
    return MergedCaches(sources=len(files), added=added, total=total)
