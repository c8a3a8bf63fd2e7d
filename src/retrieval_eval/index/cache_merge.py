"""Union the embedding caches of parallel jobs into one, refusing another model's vectors.

Each folder is a run's ``--cache-dir`` (the vectors live in its ``embeddings/``
subfolder), which is exactly what a matrix job uploads as an artifact. A shard's rows
pass the same checks a read makes (``EmbeddingCache.get_many``) before they are copied,
and a shard cache that git tracks (one committed into the folder the artifacts are
downloaded to) is left out, as a run leaves out its own committed cache.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path

from retrieval_eval.errors import InputError
from retrieval_eval.index.embedding_cache import (
    CACHE_FILE,
    CACHE_FORMAT,
    EMBEDDINGS_SUBDIR,
    EmbeddingCache,
    committed_cache_files,
    file_format,
    open_read_only,
)
from retrieval_eval.index.embedding_recipe import ROLES, embedding_recipe
from retrieval_eval.index.model_catalog import ModelSpec


@dataclass(frozen=True)
class MergedCaches:
    sources: int  # the caches merged (those left out are in `warnings`)
    added: int  # vectors not already in the target
    total: int
    warnings: list[str] = field(default_factory=list)  # for the run's log, one line each


def cache_file(cache_dir: Path) -> Path:
    return cache_dir / EMBEDDINGS_SUBDIR / CACHE_FILE


def cached_models(sources: Sequence[Path]) -> set[str]:
    """The sha256 of every model whose vectors the caches in ``sources`` hold (a cache
    that cannot be read holds none here; ``merge_caches`` says why)."""
    found: set[str] = set()
    for source in sources:
        path = cache_file(source)
        if not path.is_file():
            continue
        try:
            with closing(open_read_only(path)) as db:
                if file_format(db) == CACHE_FORMAT:
                    rows = db.execute("SELECT DISTINCT model_sha256 FROM vectors")
                    found.update(str(model) for (model,) in rows)
        except sqlite3.DatabaseError:
            continue
    return found


def merge_caches(
    target: Path, sources: Sequence[Path], model_sha256: str, spec: ModelSpec
) -> MergedCaches:
    """Every source is checked before anything is written: a refused merge changes nothing.
    Rows are kept when made by the model ``spec`` with the file ``model_sha256``, as a
    passage or as a query (their recipes differ for a model with prefixes)."""
    recipes = {embedding_recipe(model_sha256, spec, role) for role in ROLES}
    files: list[Path] = []
    warnings: list[str] = []
    for source in sources:
        path = cache_file(source)
        if not path.is_file():
            raise InputError(
                f"no embedding cache here (expected {EMBEDDINGS_SUBDIR}/{CACHE_FILE}); give the "
                "--cache-dir of `retrieval-eval embed`",
                file=source,
            )
        committed, unreadable = committed_cache_files(path)
        if committed:
            why = f"git's index could not be read ({unreadable})" if unreadable else "git tracks it"
            warnings.append(
                f"{path}: not merged: {why}, and a cache that arrives with the repository's "
                "files could hold any vectors"
            )
            continue
        try:
            with closing(open_read_only(path)) as db:
                version = file_format(db)
                models = (
                    {str(m) for (m,) in db.execute("SELECT DISTINCT model_sha256 FROM vectors")}
                    if version == CACHE_FORMAT
                    else set()
                )
        except sqlite3.DatabaseError as error:
            warnings.append(f"{path}: not merged: not a usable SQLite database ({error})")
            continue
        if version != CACHE_FORMAT:
            warnings.append(
                f"{path}: not merged: written in cache format {version or 1}, this version reads "
                f"format {CACHE_FORMAT} (make it again with this version's `embed`)"
            )
            continue
        others = models - {model_sha256}
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
            with closing(open_read_only(path)) as db:
                new, refused = cache.merge_from(db, model_sha256, recipes)
            added += new
            if refused:
                warnings.append(
                    f"{path}: {refused} row(s) not merged: not the vector of the text, model "
                    "and recipe their key names"
                )
        total = len(cache)
        warnings[:0] = cache.warnings
    return MergedCaches(sources=len(files), added=added, total=total, warnings=warnings)
