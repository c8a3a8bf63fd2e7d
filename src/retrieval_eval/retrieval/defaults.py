"""The retriever settings whose defaults are not constants, resolved in one place.

A ``[retrievers]`` table leaves some values unset because their default depends
on where the run is (its folder, its model and cache folders) or on the machine
(the home folder, the cores). The edges pass those in; the core never looks at
the environment. The dense model's default, ``"auto"``, depends on the corpus and the
baseline: it is resolved once they are loaded, before anything is indexed
(``choose_dense_model``).
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path

from retrieval_eval.index.embedding_cache import EMBEDDINGS_SUBDIR
from retrieval_eval.index.model_catalog import (
    AUTO_CHOICES,
    AUTO_INT8_ABOVE,
    AUTO_MODEL,
    DEFAULT_MODEL,
    INT8_MODEL,
    model_spec,
)
from retrieval_eval.index.model_install import default_model_dir, model_folder
from retrieval_eval.retrieval.config import CustomConfig, DenseConfig, RetrieversConfig
from retrieval_eval.retrieval.external.engines_config import ENGINES

# The retrievers that embed with [retrievers.dense] model (postgres and chroma only when
# they index or embed queries themselves, which a report names through the model anyway).
EMBEDDING_RETRIEVERS = frozenset(
    {"dense", "hybrid", "chroma", "postgres", "qdrant", "lancedb", "milvus"}
)


def resolve_defaults(
    config: RetrieversConfig,
    *,
    home: Path,
    cores: int,
    workdir: Path | None = None,
    model_dir: Path | None = None,
    cache_dir: Path | None = None,
) -> RetrieversConfig:
    """``config`` with every machine- and run-dependent default filled in.

    - With ``workdir`` (the repository), the dense table's folders are taken relative to
      it, and so is the ``cwd`` of a custom retriever and of a custom reranker, which is
      the repository itself when unset: their factory module is imported from there.
    - The dense model folder: the table's, else where ``retrieval-eval model install``
      puts the table's ``model`` beside the default model's folder (the run's
      ``model_dir``, else under ``home``). With ``model = "auto"`` it is the default
      model's folder until the model is chosen (``with_dense_model``).
    - The embedding cache: the table's, else ``<cache_dir>/embeddings`` when the run has a
      cache folder (none otherwise).
    - ONNX threads: the table's, else one per available core (``cores``).
    """
    dense = config.dense
    updates: dict[str, object] = {}
    if workdir is not None:
        for name in ("model_dir", "cache_dir", "persist_dir"):
            value = getattr(dense, name)
            if value is not None:
                updates[name] = (workdir / value).resolve()
    if dense.model_dir is None:
        default_dir = model_dir if model_dir is not None else default_model_dir(home)
        placed = DEFAULT_MODEL if dense.model == AUTO_MODEL else dense.model
        updates["model_dir"] = model_folder(default_dir, model_spec(placed))
    if dense.cache_dir is None and cache_dir is not None:
        updates["cache_dir"] = cache_dir / EMBEDDINGS_SUBDIR
    if dense.threads is None:
        updates["threads"] = cores
    resolved = config.model_copy(update={"dense": dense.model_copy(update=updates)})
    if cache_dir is not None:
        resolved._cache_dir = cache_dir
    if workdir is None:
        return resolved
    for engine in ENGINES:
        table = getattr(resolved, engine)
        if table is not None and table.local_dir is not None:
            placed = table.model_copy(update={"local_dir": (workdir / table.local_dir).resolve()})
            resolved = resolved.model_copy(update={engine: placed})
    if resolved.custom is not None:
        resolved = resolved.model_copy(update={"custom": _in(workdir, resolved.custom)})
    for framework in ("langchain", "llamaindex"):
        table = getattr(resolved, framework)
        if table is not None:
            placed = table.model_copy(
                update={"cwd": (workdir / (table.cwd or Path("."))).resolve()}
            )
            resolved = resolved.model_copy(update={framework: placed})
    if resolved.hybrid.custom is not None:
        hybrid = resolved.hybrid.model_copy(update={"custom": _in(workdir, resolved.hybrid.custom)})
        resolved = resolved.model_copy(update={"hybrid": hybrid})
    return resolved


def _in(workdir: Path, custom: CustomConfig) -> CustomConfig:
    return custom.model_copy(update={"cwd": (workdir / (custom.cwd or Path("."))).resolve()})


@dataclass(frozen=True)
class DenseModelChoice:
    """The embedding model a run's dense retrievers use, and why, for the report."""

    model: str
    reason: str

    @property
    def line(self) -> str:
        return f"{self.model} ({self.reason})"


def choose_dense_model(
    config: RetrieversConfig, *, documents: int, recorded: Collection[str] = ()
) -> DenseModelChoice:
    """The model ``config``'s dense table names, ``"auto"`` resolved: the int8 copy for a
    corpus of more than ``AUTO_INT8_ABOVE`` documents, else the FP32 model; but the one
    the baseline's retrievers ``recorded`` when it is one of the two, so that a corpus
    crossing the threshold changes no recorded setting (`baseline update` re-chooses).
    ``documents`` counts the whole corpus, which every shard of a run loads alike."""
    model = config.dense.model
    if model != AUTO_MODEL:
        return DenseModelChoice(model, "set in [retrievers.dense] model")
    if config.chroma is not None and config.chroma.index == "existing":
        return DenseModelChoice(
            DEFAULT_MODEL,
            f'auto: [retrievers.chroma] index = "existing" holds {DEFAULT_MODEL} vectors',
        )
    for engine in ENGINES:
        table = getattr(config, engine)
        if table is not None and table.index == "existing":
            return DenseModelChoice(
                DEFAULT_MODEL,
                f'auto: [retrievers.{engine}] index = "existing" is searched with {DEFAULT_MODEL}',
            )
    # The size in words, not the count: the merge of a sharded run, which has no corpus to
    # count, says the same, and the line stays put while documents are added.
    above = documents > AUTO_INT8_ABOVE
    by_size = auto_model(documents)
    size = (
        f"more than {AUTO_INT8_ABOVE:,} documents"
        if above
        else f"{AUTO_INT8_ABOVE:,} documents or fewer"
    )
    kept = {name for name in recorded if name in AUTO_CHOICES}
    if len(kept) == 1 and by_size not in kept:
        return DenseModelChoice(
            kept.pop(), f"auto: kept from the baseline; {size} would choose {by_size}"
        )
    return DenseModelChoice(by_size, f"auto: {size}")


def auto_model(documents: int) -> str:
    """What ``"auto"`` is for a corpus of ``documents``, the baseline aside."""
    return INT8_MODEL if documents > AUTO_INT8_ABOVE else DEFAULT_MODEL


def dense_for_corpus(dense: DenseConfig, documents: int) -> DenseConfig:
    """``dense`` with ``"auto"`` chosen by the size of the corpus a retriever indexes, for
    a retriever built outside a run (the library, the bench scripts); a run resolves it
    before, with the baseline (``compare.dense_model``)."""
    if dense.model != AUTO_MODEL:
        return dense
    return _placed(dense, auto_model(documents))


def _placed(dense: DenseConfig, model: str) -> DenseConfig:
    updates: dict[str, object] = {"model": model}
    if dense.model_dir is not None:
        updates["model_dir"] = model_folder(dense.model_dir, model_spec(model))
    return dense.model_copy(update=updates)


def with_dense_model(config: RetrieversConfig, model: str) -> RetrieversConfig:
    """``config`` with an ``"auto"`` dense model replaced by ``model``, its folder placed
    beside the default model's as ``model install`` puts it; a named model stays."""
    if config.dense.model != AUTO_MODEL:
        return config
    return config.model_copy(update={"dense": _placed(config.dense, model)})
