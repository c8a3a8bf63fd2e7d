"""The int8 copy of the model, made from the installed FP32 model: byte for byte the
pinned INT8_SHA256 (the quantization is repeatable), its word-piece table stored as int8
blocks with their scales, and its vectors within the measured cosine of FP32's; a
different block size is a different model, never mistaken for the pinned one."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import numpy as np
import onnx
import pytest

from retrieval_eval.index.model_build import WORD_EMBEDDINGS
from retrieval_eval.index.model_catalog import INT8_MODEL
from retrieval_eval.index.model_install import TOKENIZER_FILES
from retrieval_eval.index.model_quantize import (
    INT8_FOLDER,
    INT8_SHA256,
    quantize_int8,
    quantized_model_dir,
)
from retrieval_eval.index.text_embedding import TextEmbedding

pytestmark = pytest.mark.slow  # quantizing the 90 MB model takes a few seconds

TEXTS = [
    "What did the flights to Lisbon cost?",
    "Blend basil, pine nuts, garlic, parmesan and olive oil.",
    "The boundary layer separates at high Mach numbers.",
]


def test_the_int8_copy_is_the_pinned_model_and_close_to_fp32(
    model_dir: Path, tmp_path: Path
) -> None:
    quantized = quantize_int8((model_dir / "model.onnx").read_bytes())
    assert hashlib.sha256(quantized).hexdigest() == INT8_SHA256
    graph = onnx.load_from_string(quantized).graph
    tables = {init.name: init for init in graph.initializer}
    assert WORD_EMBEDDINGS not in tables
    assert tables[f"{WORD_EMBEDDINGS}_int8"].data_type == onnx.TensorProto.INT8
    assert list(tables[f"{WORD_EMBEDDINGS}_scale"].dims)[1:] == [6, 1]  # 384 / 64 a row
    assert quantized_model_dir(model_dir) == model_dir.parent / INT8_FOLDER
    folder = tmp_path / INT8_FOLDER
    folder.mkdir()
    (folder / "model.onnx").write_bytes(quantized)
    for name in TOKENIZER_FILES:
        shutil.copy(model_dir / name, folder / name)
    int8 = TextEmbedding(folder, intra_op_threads=2, model=INT8_MODEL).embed(TEXTS)
    fp32 = TextEmbedding(model_dir, intra_op_threads=2).embed(TEXTS)
    cosines = np.sum(int8 * fp32, axis=1)
    assert cosines.min() > 0.98


def test_another_block_size_is_another_model(model_dir: Path) -> None:
    coarse = quantize_int8((model_dir / "model.onnx").read_bytes(), table_block=384)
    assert hashlib.sha256(coarse).hexdigest() != INT8_SHA256
    scales = {i.name: i for i in onnx.load_from_string(coarse).graph.initializer}
    assert list(scales[f"{WORD_EMBEDDINGS}_scale"].dims)[1:] == [1, 1]
