"""The retriever settings whose defaults are not constants, resolved in one place.

A ``[retrievers]`` table leaves some values unset because their default depends
on where the run is (its folder, its model and cache folders) or on the machine
(the home folder, the cores). The edges pass those in; the core never looks at
the environment.
"""

from __future__ import annotations

from pathlib import Path

from retrieval_eval.index.embedding_cache import EMBEDDINGS_SUBDIR
from retrieval_eval.index.model_catalog import model_spec
from retrieval_eval.index.model_install import default_model_dir, model_folder
from retrieval_eval.retrieval.config import CustomConfig, RetrieversConfig


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
      ``model_dir``, else under ``home``).
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
        updates["model_dir"] = model_folder(default_dir, model_spec(dense.model))
    if dense.cache_dir is None and cache_dir is not None:
        updates["cache_dir"] = cache_dir / EMBEDDINGS_SUBDIR
    if dense.threads is None:
        updates["threads"] = cores
    resolved = config.model_copy(update={"dense": dense.model_copy(update=updates)})
    if workdir is None:
        return resolved
    if resolved.custom is not None:
        resolved = resolved.model_copy(update={"custom": _in(workdir, resolved.custom)})
    if resolved.hybrid.custom is not None:
        hybrid = resolved.hybrid.model_copy(update={"custom": _in(workdir, resolved.hybrid.custom)})
        resolved = resolved.model_copy(update={"hybrid": hybrid})
    return resolved


def _in(workdir: Path, custom: CustomConfig) -> CustomConfig:
    return custom.model_copy(update={"cwd": (workdir / (custom.cwd or Path("."))).resolve()})
