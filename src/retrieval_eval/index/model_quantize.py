"""An int8 copy of the model: onnxruntime's dynamic quantization, opt-in and pinned.

Dynamic quantization stores the MatMul weights as int8 and quantizes activations
per call, which trades a little accuracy for integer matrix products. It is a
separate model with its own pinned sha256, so every fingerprint that names the
model (embedding-cache keys, the report's environment, the dense retriever's
configuration recorded in the baseline) tells the two apart. docs/model.md has
the measured quality and speed.
"""

from __future__ import annotations

import logging
import tempfile
from pathlib import Path

# sha256 of quantize_dynamic(model.onnx, QInt8) with onnxruntime 1.32.0, the version in
# requirements/runtime.lock; the quantizer's output is byte-for-byte repeatable.
INT8_SHA256 = "53ef3f6aa80e9570c23be1e6c1bdbb0082ef17b401b0d1a2406eea53d30f81de"
PINNED_WITH_ONNXRUNTIME = "1.32.0"
QUANTIZATIONS = ("int8",)
# Beside chromadb's folder for the FP32 model: one install never overwrites the other.
INT8_FOLDER = "onnx-int8"


def quantized_model_dir(fp32_model_dir: Path) -> Path:
    return fp32_model_dir.parent / INT8_FOLDER


def quantize_int8(fp32_model: bytes) -> bytes:
    """The dynamically quantized (QInt8 weights) serialization of ``fp32_model``."""
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
            quantize_dynamic(source, target, weight_type=QuantType.QInt8)
        finally:
            root.setLevel(level)
        return target.read_bytes()
