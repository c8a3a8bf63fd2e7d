"""An int8 copy of the model: onnxruntime's dynamic quantization, opt-in and pinned.

Dynamic quantization stores the MatMul weights as int8 and quantizes activations
per call, which trades a little accuracy for integer matrix products. The weights are
quantized per channel (one scale per output column): with one scale per matrix, the
vectors' cosine to FP32's averaged 0.92 on 256-token passages and NDCG@10 fell 0.016 on
Cranfield; per channel 0.994 and 0.0035, at the same speed (docs/benchmarks.md, "The
int8 model", has the other recipes tried). It is a
separate model with its own pinned sha256, so every fingerprint that names the
model (embedding-cache keys, the report's environment, the dense retriever's
configuration recorded in the baseline) tells the two apart. docs/model.md has
the measured quality and speed.
"""

from __future__ import annotations

import logging
import tempfile
from pathlib import Path

# sha256 of quantize_int8(model.onnx) with onnxruntime 1.32.0, the version in
# requirements/runtime.lock; the quantizer's output is byte-for-byte repeatable.
INT8_SHA256 = "3f6d2319163804bd4af404a6346b5c1c779ffe678e176133489fc42f7eba01ad"
PINNED_WITH_ONNXRUNTIME = "1.32.0"
QUANTIZATIONS = ("int8",)
# Beside chromadb's folder for the FP32 model: one install never overwrites the other.
INT8_FOLDER = "onnx-int8"


def quantized_model_dir(fp32_model_dir: Path) -> Path:
    return fp32_model_dir.parent / INT8_FOLDER


def quantize_int8(fp32_model: bytes) -> bytes:
    """The dynamically quantized serialization of ``fp32_model``: the weight MatMuls with
    int8 weights, one scale per output channel; everything else (the embeddings lookup
    included) stays FP32."""
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
        return target.read_bytes()
