"""MiniLMEmbedding on the real model: chromadb's vectors, faster, and never twice for one text."""

from __future__ import annotations

import warnings
from pathlib import Path

import chromadb
import numpy as np
import pytest
from chromadb.utils.embedding_functions.onnx_mini_lm_l6_v2 import ONNXMiniLM_L6_V2

from retrieval_eval.errors import InputError
from retrieval_eval.index.embedding import MiniLMEmbedding
from retrieval_eval.index.embedding_cache import EmbeddingCache
from retrieval_eval.index.model_install import MODEL_SHA256

LONG = " ".join(f"the shock wave number {i} reflects from the wall." for i in range(80))
TEXTS = [
    "hello world",
    "Ünïcödé naïve café — Größe 東京 😀 emoji",
    "",
    LONG,  # ~800 tokens: truncated to 256
    "The boundary layer separates at high Mach numbers.",
    "What similarity laws must be obeyed when constructing aeroelastic models "
    "of heated high speed aircraft?",
    "x" * 2000,  # one long unbroken token run
    "hello world",  # duplicate of the first
]


@pytest.fixture(scope="module")
def embedder(model_dir: Path) -> MiniLMEmbedding:
    return MiniLMEmbedding(model_dir, intra_op_threads=2)


def test_vectors_equal_chromadbs_default_embedding_function(
    embedder: MiniLMEmbedding, model_dir: Path
) -> None:
    # chromadb's function reads the same folder (its DOWNLOAD_PATH) and so runs offline.
    assert model_dir == ONNXMiniLM_L6_V2.DOWNLOAD_PATH / "onnx"
    theirs = np.array(ONNXMiniLM_L6_V2(preferred_providers=["CPUExecutionProvider"])(TEXTS))
    ours = np.array(embedder(TEXTS))
    assert ours.shape == (len(TEXTS), 384)
    assert np.abs(ours - theirs).max() <= 1e-5
    assert not (ONNXMiniLM_L6_V2.DOWNLOAD_PATH / "onnx.tar.gz").exists()  # nothing downloaded


def test_vectors_are_unit_length_and_meaningful(embedder: MiniLMEmbedding) -> None:
    eating, bread, baby = embedder.embed(
        [
            "A man is eating food.",
            "A man is eating a piece of bread.",
            "The girl is carrying a baby.",
        ]
    )
    assert np.allclose(np.linalg.norm([eating, bread, baby], axis=1), 1.0, atol=1e-6)
    assert float(eating @ bread) > 0.6 > 0.2 > float(eating @ baby)


def test_texts_past_256_tokens_are_truncated_like_chromadb(embedder: MiniLMEmbedding) -> None:
    longer = LONG + " and then something entirely different about cooking pasta"
    first, second = embedder.embed([LONG, longer])
    assert np.array_equal(first, second)


def test_duplicates_are_embedded_once_and_order_is_kept(model_dir: Path) -> None:
    embedder = MiniLMEmbedding(model_dir, intra_op_threads=1, batch_size=2)
    vectors = embedder.embed(["b b b b", "a", "b b b b", "c c"])
    alone = embedder.embed(["a"])
    assert embedder.texts_embedded == 4  # three distinct, then "a" again (no cache)
    assert np.array_equal(vectors[0], vectors[2])
    assert np.abs(vectors[1] - alone[0]).max() <= 1e-6


def test_empty_input_embeds_nothing(model_dir: Path) -> None:
    # (chromadb's wrapper around __call__ rejects an empty list itself; embed() accepts it.)
    embedder = MiniLMEmbedding(model_dir, intra_op_threads=1)
    assert embedder.embed([]).shape == (0, 384)
    assert embedder.texts_embedded == 0


def test_second_run_over_an_unchanged_corpus_embeds_nothing(
    model_dir: Path, tmp_path: Path
) -> None:
    corpus = [f"passage {i} about supersonic flow over a cone" for i in range(50)]
    with EmbeddingCache(tmp_path / "cache") as cache:
        cold = MiniLMEmbedding(model_dir, cache, intra_op_threads=2)
        first = cold.embed(corpus)
        assert (cold.texts_embedded, cold.cache_hits) == (50, 0)
    # A new process would open the cache afresh, like the next CI run.
    with EmbeddingCache(tmp_path / "cache") as cache:
        warm = MiniLMEmbedding(model_dir, cache, intra_op_threads=2)
        second = warm.embed([*corpus, "one new passage"])
        assert (warm.texts_embedded, warm.cache_hits) == (1, 50)
    assert np.array_equal(first, second[:50])


def test_model_sha_is_exposed_and_keys_the_cache(embedder: MiniLMEmbedding) -> None:
    assert embedder.model_sha256 == MODEL_SHA256


def test_corrupted_model_is_refused_before_embedding(tmp_path: Path, model_dir: Path) -> None:
    for item in model_dir.iterdir():
        (tmp_path / item.name).symlink_to(item)
    (tmp_path / "model.onnx").unlink()
    (tmp_path / "model.onnx").write_bytes(b"\x08\x07garbage")
    with pytest.raises(InputError, match=r"model\.onnx has sha256 .*retrieval-eval model install"):
        MiniLMEmbedding(tmp_path)


def test_chromadb_accepts_it_without_warnings(embedder: MiniLMEmbedding) -> None:
    client = chromadb.EphemeralClient()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        collection = client.create_collection("minilm-protocol", embedding_function=embedder)
        collection.add(
            ids=["cone", "pasta"], documents=[TEXTS[5], "Boil the pasta in salted water."]
        )
        found = collection.query(query_texts=["aeroelastic models of hot aircraft"], n_results=1)
    assert found["ids"] == [["cone"]]
    configuration = collection.configuration
    hnsw = configuration.get("hnsw")
    assert hnsw is not None and hnsw.get("space") == "cosine"
    stored_function = configuration.get("embedding_function")
    assert stored_function is not None and stored_function.name() == MiniLMEmbedding.name()


def test_config_round_trip_rebuilds_an_equivalent_function(
    embedder: MiniLMEmbedding, tmp_path: Path
) -> None:
    with EmbeddingCache(tmp_path) as cache:
        original = MiniLMEmbedding(embedder.model_dir, cache, intra_op_threads=1, batch_size=8)
        rebuilt = MiniLMEmbedding.build_from_config(original.get_config())
        assert rebuilt.get_config() == original.get_config()
        # chromadb never calls its rebuilt copies: they open no cache of their own.
        assert rebuilt.cache is None


def test_session_keeps_onnxruntimes_arena_memory_patterns_and_prepacking(
    embedder: MiniLMEmbedding,
) -> None:
    # With the three turned off, 256-token texts cost about 1.4x the CPU time, and peak
    # memory was not lower (docs/benchmarks.md, "Embedding"): they stay at the defaults.
    options = embedder._session.get_session_options()
    assert options.enable_cpu_mem_arena
    assert options.enable_mem_pattern
    with pytest.raises(Exception, match="disable_prepacking"):
        options.get_session_config_entry("session.disable_prepacking")


@pytest.mark.slow
def test_vectors_equal_those_of_a_session_with_arena_patterns_and_prepacking_off(
    embedder: MiniLMEmbedding, model_dir: Path
) -> None:
    # The options change how onnxruntime lays out memory, never the arithmetic's result,
    # so vectors in an embedding cache filled before stay valid.
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.log_severity_level = 3
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.enable_cpu_mem_arena = False
    options.enable_mem_pattern = False
    options.add_session_config_entry("session.disable_prepacking", "1")
    options.intra_op_num_threads = 2
    frugal = MiniLMEmbedding(model_dir, intra_op_threads=2)
    frugal.__dict__["_session"] = ort.InferenceSession(
        str(model_dir / "model.onnx"), options, providers=["CPUExecutionProvider"]
    )
    texts = TEXTS + [f"{LONG} {i}" for i in range(10)] + [f"query {i} on heat" for i in range(20)]
    ours, theirs = embedder.embed(texts), frugal.embed(texts)
    cosines = (ours * theirs).sum(1) / np.linalg.norm(ours, axis=1) / np.linalg.norm(theirs, axis=1)
    assert cosines.min() >= 0.99999


def test_paraphrase_minilm_equals_its_own_exports_pooled_output() -> None:
    """paraphrase-MiniLM-L3-v2's package ships no encoder, but its ONNX export ends in
    sentence-transformers' own mean pooling (output "461"). The reference here runs the
    package's file as shipped on every text alone, padded to the export's 128 tokens,
    and reads that output; ours pools the token embeddings in numpy, in sorted batches."""
    import onnxruntime as ort
    from tokenizers import Tokenizer

    from retrieval_eval.index.model_catalog import MODELS
    from retrieval_eval.index.model_install import default_model_dir, model_folder, packaged_file

    spec = MODELS["paraphrase-MiniLM-L3-v2"]
    ours = MiniLMEmbedding(
        model_folder(default_model_dir(Path.home()), spec), batch_size=3, model=spec.name
    ).embed(TEXTS)
    assert spec.onnx_pooled_output is not None
    session = ort.InferenceSession(
        str(packaged_file(spec.files["model.onnx"])), providers=["CPUExecutionProvider"]
    )
    tokenizer = Tokenizer.from_file(str(packaged_file(spec.files["tokenizer.json"])))
    tokenizer.enable_truncation(max_length=spec.max_tokens)
    tokenizer.enable_padding(length=spec.max_tokens)
    reference = []
    for text in TEXTS:
        encoding = tokenizer.encode(text)
        (pooled,) = session.run(
            [spec.onnx_pooled_output],
            {
                "input_ids": np.array([encoding.ids], dtype=np.int64),
                "attention_mask": np.array([encoding.attention_mask], dtype=np.int64),
            },
        )
        reference.append(pooled[0])
    theirs = np.stack(reference)
    cosine = np.sum(ours * theirs, 1) / (
        np.linalg.norm(ours, axis=1) * np.linalg.norm(theirs, axis=1)
    )
    assert cosine.min() >= 0.999
    assert np.abs(ours - theirs).max() <= 1e-4  # measured ~2e-7: the same floats, re-batched
    # The model has no Normalize module: its vectors keep their length, as the reference's.
    assert np.abs(np.linalg.norm(ours, axis=1) - 1.0).max() > 0.5
