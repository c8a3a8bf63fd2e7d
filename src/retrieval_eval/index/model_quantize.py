"""An int8 copy of the model: onnxruntime's dynamic quantization, opt-in and pinned.

Dynamic quantization stores the MatMul weights as int8 and quantizes activations
per call, which trades a little accuracy for integer matrix products. The weights are
quantized per channel (one scale per output column): with one scale per matrix, the
vectors' cosine to FP32's averaged 0.92 on 256-token passages and NDCG@10 fell 0.016 on
Cranfield; per channel 0.994 and 0.0035, at the same speed (docs/benchmarks.md, "The
int8 model", has the other recipes tried). The word-piece table, which the quantizer
leaves as it is, is quantized here too, one scale per 64 entries of a row, which takes
the file from 35 MB to 24 MB (docs/benchmarks.md, "Smaller model files"). It is a
separate model with its own pinned sha256, so every fingerprint that names the
model (embedding-cache keys, the report's environment, the dense retriever's
configuration recorded in the baseline) tells the two apart. docs/model.md has
the measured quality and speed."""

from __future__ import annotations

import logging
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import onnx

# sha256 of quantize_int8(model.onnx) with onnxruntime 1.32.0, the version in
# requirements/runtime.lock (and onnx as for MODEL_SHA256); the quantizer's output is
# byte-for-byte repeatable, and so is the word-piece table's quantization after it.
INT8_SHA256 = "fc442d19a06cd103d8aa12a2a9fb0253a29e69abd291bd710a6663d5ad78bcca"
PINNED_WITH_ONNXRUNTIME = "1.32.0"
QUANTIZATIONS = ("int8",)
# Beside chromadb's folder for the FP32 model: one install never overwrites the other.
INT8_FOLDER = "onnx-int8"
# Entries of a word-piece row that share one int8 scale (a divisor of the row's 384): six
# scales a row. One scale a row (384) had 0.0073 mean relative error on the table, 64 has
# 0.0059 for 0.6 MB more; both give the same cosines (docs/benchmarks.md, "Smaller model
# files").
TABLE_BLOCK = 64


def quantized_model_dir(fp32_model_dir: Path) -> Path:
    return fp32_model_dir.parent / INT8_FOLDER


def quantize_int8(fp32_model: bytes, *, table_block: int = TABLE_BLOCK) -> bytes:
    """The dynamically quantized serialization of ``fp32_model``: the weight MatMuls with
    int8 weights, one scale per output channel, and the word-piece table with int8
    entries, one scale per ``table_block`` entries of a row (``_quantize_word_embeddings``);
    everything else stays FP32."""
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    with tempfile.TemporaryDirectory(prefix="retrieval-eval-quantize-") as work:
        source = Path(work) / "model.onnx"
        target = Path(work) / "model.int8.onnx"
        source.write_bytes(fp32_model)
        # The quantizer logs a pre-processing hint on the root logger at every call;
        # it concerns static quantization of vision models, not this one.
        root = logging.getLogger()
        level = root.level
        root.setLevel(logging.ERROR)
        try:
            quantize_dynamic(
                source,
                target,
                weight_type=QuantType.QInt8,
                per_channel=True,
                op_types_to_quantize=["MatMul"],
            )
        finally:
            root.setLevel(level)
        model = onnx.load_from_string(target.read_bytes())
    _quantize_word_embeddings(model, table_block)
    onnx.checker.check_model(model)
    serialized: bytes = model.SerializeToString()
    return serialized


def _quantize_word_embeddings(model: onnx.ModelProto, block: int) -> None:
    """Replace the float16 word-piece table and its lookup, in place, by int8 entries with
    one float32 scale per ``block`` consecutive entries of a row: Gather the int8 blocks
    and their scales, Cast, Mul, Reshape back to rows.

    The quantizer leaves Gather alone, and this table (30522 × 384) is most of what it
    leaves: 23 MB as float16, 12 MB as int8. A block's scale is its largest magnitude
    over 127, so each block keeps its own range; the scales are gathered with the rows,
    since DequantizeLinear takes one scale per fixed axis, which a lookup's rows are not.
    Names and node order are fixed, so the result is as repeatable as the quantizer's."""
    # Imported here: every run imports this module for the pin, only an install quantizes.
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    from retrieval_eval.index.model_build import HIDDEN, WORD_EMBEDDINGS

    graph = model.graph
    nodes = [onnx.NodeProto.FromString(node.SerializeToString()) for node in graph.node]
    [at] = [
        i for i, n in enumerate(nodes) if n.op_type == "Gather" and n.input[0] == WORD_EMBEDDINGS
    ]
    lookup = nodes[at]
    [cast_at] = [i for i, node in enumerate(nodes) if lookup.output[0] in node.input]
    cast = nodes[cast_at]
    [table] = [init for init in graph.initializer if init.name == WORD_EMBEDDINGS]
    rows = numpy_helper.to_array(table).astype(np.float32)
    blocks = rows.reshape(rows.shape[0], HIDDEN // block, block)
    peaks = np.abs(blocks).max(axis=2, keepdims=True)
    scales = np.where(peaks > 0, peaks / np.float32(127), np.float32(1)).astype(np.float32)
    quantized = np.clip(np.rint(blocks / scales), -127, 127).astype(np.int8)
    ids = lookup.input[1]
    int8_table, table_scales, row_shape = (
        f"{WORD_EMBEDDINGS}_int8",
        f"{WORD_EMBEDDINGS}_scale",
        f"{WORD_EMBEDDINGS}_row_shape",
    )
    names = ["word_embeddings_int8", "word_embeddings_scale", "word_embeddings_cast"]
    replacement = [
        helper.make_node("Gather", [int8_table, ids], [names[0]], name=names[0]),
        helper.make_node("Gather", [table_scales, ids], [names[1]], name=names[1]),
        helper.make_node("Cast", [names[0]], [names[2]], name=names[2], to=TensorProto.FLOAT),
        helper.make_node(
            "Mul", [names[2], names[1]], ["word_embeddings_blocks"], name="word_embeddings_blocks"
        ),
        helper.make_node(
            "Reshape",
            ["word_embeddings_blocks", row_shape],
            [cast.output[0]],
            name="word_embeddings_rows",
        ),
    ]
    nodes = [node for i, node in enumerate(nodes) if i not in (at, cast_at)]
    nodes[at:at] = replacement
    del graph.node[:]
    graph.node.extend(nodes)
    initializers = [
        onnx.TensorProto.FromString(init.SerializeToString())
        for init in graph.initializer
        if init.name != WORD_EMBEDDINGS
    ]
    initializers += [
        numpy_helper.from_array(quantized, int8_table),
        numpy_helper.from_array(scales, table_scales),
        numpy_helper.from_array(np.array([0, 0, HIDDEN], dtype=np.int64), row_shape),
    ]
    del graph.initializer[:]
    graph.initializer.extend(initializers)
