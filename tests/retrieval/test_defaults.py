"""The retriever defaults that depend on the run and the machine, filled in one place."""

from __future__ import annotations

from pathlib import Path

from retrieval_eval.retrieval.config import (
    CustomConfig,
    DenseConfig,
    HybridConfig,
    RetrieversConfig,
)
from retrieval_eval.retrieval.defaults import choose_dense_model, resolve_defaults, with_dense_model


def test_machine_defaults_fill_only_what_is_unset(tmp_path: Path) -> None:
    filled = resolve_defaults(RetrieversConfig(), home=tmp_path, cores=3)
    assert filled.dense.model_dir == (
        tmp_path / ".cache" / "chroma" / "onnx_models" / "all-MiniLM-L6-v2" / "onnx"
    )
    assert filled.dense.threads == 3
    assert filled.dense.cache_dir is None  # no run cache folder: no embedding cache
    chosen = RetrieversConfig(dense=DenseConfig(model_dir=Path("m"), threads=1))
    assert resolve_defaults(chosen, home=tmp_path, cores=3) == chosen


def test_a_runs_folders_fill_the_defaults_and_anchor_every_relative_path(tmp_path: Path) -> None:
    repository, home = tmp_path / "repo", tmp_path / "home"
    reranker = CustomConfig(command=["./rerank"])
    config = RetrieversConfig(
        dense=DenseConfig(persist_dir=Path("index")),
        custom=CustomConfig(python="my_search:make", cwd=Path("search")),
        hybrid=HybridConfig(reranker="custom", custom=reranker),
    )
    filled = resolve_defaults(
        config,
        workdir=repository,
        model_dir=tmp_path / "model",
        cache_dir=repository / ".cache",
        home=home,
        cores=2,
    )
    assert filled.dense.model_dir == tmp_path / "model"  # the run's, not the home folder's
    assert filled.dense.cache_dir == repository / ".cache" / "embeddings"
    assert filled.dense.persist_dir == (repository / "index").resolve()
    assert filled.custom is not None and filled.custom.cwd == (repository / "search").resolve()
    # A custom reranker's factory is imported from the repository when no cwd is set.
    assert filled.hybrid.custom is not None and filled.hybrid.custom.cwd == repository.resolve()
    # The table's own values win over the run's.
    own = config.model_copy(
        update={"dense": DenseConfig(model_dir=Path("m"), cache_dir=Path("c"), threads=1)}
    )
    kept = resolve_defaults(
        own,
        workdir=repository,
        model_dir=tmp_path / "model",
        cache_dir=tmp_path,
        home=home,
        cores=2,
    ).dense
    assert (kept.model_dir, kept.cache_dir, kept.threads) == (
        (repository / "m").resolve(),
        (repository / "c").resolve(),
        1,
    )


def test_another_model_is_looked_for_beside_the_default_models_folder(tmp_path: Path) -> None:
    chosen = RetrieversConfig(dense=DenseConfig(model="multilingual-e5-small-q4"))
    default_dir = tmp_path / "models" / "onnx"
    filled = resolve_defaults(chosen, home=tmp_path, cores=1, model_dir=default_dir)
    assert filled.dense.model_dir == tmp_path / "models" / "multilingual-e5-small-q4"
    # The table's own folder is taken as the model's, whatever the model.
    named = RetrieversConfig(
        dense=DenseConfig(model="multilingual-e5-small-q4", model_dir=Path("m"))
    )
    assert resolve_defaults(named, home=tmp_path, cores=1).dense.model_dir == Path("m")


def test_auto_chooses_by_size_keeps_the_baselines_model_and_fp32_for_an_existing_chroma(
    tmp_path: Path,
) -> None:
    placed = resolve_defaults(RetrieversConfig(), home=tmp_path, cores=1)
    fp32, int8 = "all-MiniLM-L6-v2", "all-MiniLM-L6-v2-int8"
    assert choose_dense_model(placed, documents=10_000).model == fp32
    big = with_dense_model(placed, choose_dense_model(placed, documents=10_001).model)
    folder = tmp_path / ".cache" / "chroma" / "onnx_models" / "all-MiniLM-L6-v2"
    assert (big.dense.model, big.dense.model_dir) == (int8, folder / "onnx-int8")
    # A baseline's one recorded built model is kept (a reranker's model is no dense model);
    # with both recorded, the size decides.
    assert (
        choose_dense_model(placed, documents=10_001, recorded={fp32, "claude-haiku-4-5"}).model
        == fp32
    )
    assert choose_dense_model(placed, documents=10_001, recorded={fp32, int8}).model == int8
    existing = RetrieversConfig.model_validate({"chroma": {"index": "existing", "collection": "c"}})
    assert choose_dense_model(existing, documents=50_000).model == fp32
    named = RetrieversConfig(dense=DenseConfig(model=fp32))
    assert choose_dense_model(named, documents=50_000, recorded={int8}).model == fp32
