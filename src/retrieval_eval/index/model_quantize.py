"""An int8 copy of the model: onnxruntime's dynamic quantization, opt-in and pinned.

Dynamic quantization stores the MatMul weights as int8 and quantizes activations
per call, which trades a little accuracy for integer matrix products. The weights are
quantized per channel (one scale per output column): with one scale per matrix, the
vectors' cosine to FP32's averaged 0.92 on 256-token passages, per channel 0.994, at
the same speed (docs/benchmarks.md, "The int8 model"). It is a
separate model with its own pinned sha256, so every fingerprint that names the
model (embedding-cache keys, the report's environment, the dense retriever's
configuration recorded in the baseline) tells the two apart. docs/model.md has
the measured quality and speed.
"""

from __future__ import annotations

import json
import logging
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import onnx

# sha256 of quantize_int8(model.onnx) with onnxruntime 1.32.0, the version in
# requirements/runtime.lock; the quantizer's output is byte-for-byte repeatable.
INT8_SHA256 = "f791fe84ef1654d76fd69a48f83031f1b4df7e991548df08e6d698caeaa0314d"
PINNED_WITH_ONNXRUNTIME = "1.32.0"
QUANTIZATIONS = ("int8",)
# Beside chromadb's folder for the FP32 model: one install never overwrites the other.
INT8_FOLDER = "onnx-int8"
# Per-channel smoothing exponents for the activations the int8 MatMuls read, made once
# from calibration text and shipped, so every install makes the same bytes.
SMOOTHING_FILE = "int8_smoothing.json"


def quantized_model_dir(fp32_model_dir: Path) -> Path:
    return fp32_model_dir.parent / INT8_FOLDER


def weight_matmuls(model: onnx.ModelProto) -> dict[str, list[onnx.NodeProto]]:
    """Each activation that feeds a MatMul by a weight -> those MatMuls (Q, K and V share one)."""
    weights = {init.name for init in model.graph.initializer}
    consumers: dict[str, list[onnx.NodeProto]] = {}
    for node in model.graph.node:
        if node.op_type == "MatMul" and node.input[1] in weights:
            consumers.setdefault(node.input[0], []).append(node)
    return consumers


def smoothing_exponents(
    model: onnx.ModelProto, input_peaks: Mapping[str, np.ndarray], alpha: float
) -> dict[str, list[int]]:
    """SmoothQuant's per-channel factors s = max|X_j|^alpha / max|W_j|^(1 - alpha), as
    powers of two (their exponents), for every weight MatMul's input X: dividing X's
    channel j by s and multiplying the weights' row j by s leaves X·W as it was but
    shrinks the few activation channels whose peaks would otherwise take the whole int8
    range of the per-tensor activation scale. ``input_peaks`` holds max|X_j| over
    calibration text."""
    from onnx import numpy_helper

    weights = {init.name: init for init in model.graph.initializer}
    exponents = {}
    for name, nodes in weight_matmuls(model).items():
        rows = [np.abs(numpy_helper.to_array(weights[n.input[1]])).max(1) for n in nodes]
        w_peak = np.maximum(np.max(rows, axis=0), 1e-8)
        scale = np.maximum(input_peaks[name], 1e-8) ** alpha / w_peak ** (1 - alpha)
        exponents[name] = np.clip(np.round(np.log2(scale)), -16, 16).astype(int).tolist()
    return exponents


def apply_smoothing(model: onnx.ModelProto, exponents: Mapping[str, list[int]]) -> None:
    """Divide each listed activation by 2^e per channel (a Mul before its MatMuls) and
    multiply the MatMuls' weight rows by 2^e, in place. Powers of two scale floats
    exactly, so the FP32 product is unchanged up to the order of rounding."""
    from onnx import helper, numpy_helper

    graph = model.graph
    weights = {init.name: init for init in graph.initializer}
    consumers = weight_matmuls(model)
    if set(consumers) != set(exponents):
        raise ValueError(
            "the smoothing exponents name other activations than the model's MatMuls read "
            f"(missing: {sorted(set(consumers) - set(exponents))}, "
            f"unknown: {sorted(set(exponents) - set(consumers))})"
        )
    muls: dict[str, onnx.NodeProto] = {}
    for index, (name, nodes) in enumerate(consumers.items()):
        scale = np.exp2(np.asarray(exponents[name], dtype=np.float32))
        rows = {weights[node.input[1]].dims[0] for node in nodes}
        if rows != {scale.size}:
            raise ValueError(f"{scale.size} smoothing exponents for {name}, which has {rows}")
        inverse = f"smoothing_{index}.inverse"
        graph.initializer.append(numpy_helper.from_array(1.0 / scale, inverse))
        smoothed = f"smoothing_{index}"
        muls[name] = helper.make_node("Mul", [name, inverse], [smoothed], name=smoothed)
        for node in nodes:
            weight = weights[node.input[1]]
            weight.CopyFrom(
                numpy_helper.from_array(
                    numpy_helper.to_array(weight) * scale[:, np.newaxis], weight.name
                )
            )
            node.input[0] = smoothed
    # Each Mul goes right after the node that produces its input, keeping the graph sorted.
    ordered: list[onnx.NodeProto] = []
    for node in graph.node:
        ordered.append(node)
        ordered += [muls[output] for output in node.output if output in muls]
    del graph.node[:]
    graph.node.extend(ordered)


def smoothing() -> dict[str, list[int]]:
    """The shipped smoothing exponents (how they were made: the file's ``made_by``)."""
    data = json.loads(Path(__file__).with_name(SMOOTHING_FILE).read_text(encoding="utf-8"))
    exponents: dict[str, list[int]] = data["exponents"]
    return exponents


def quantize_int8(fp32_model: bytes) -> bytes:
    """The smoothed, dynamically quantized (QInt8 weights, per channel) serialization of
    ``fp32_model``."""
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    model = onnx.load_from_string(fp32_model)
    apply_smoothing(model, smoothing())
    with tempfile.TemporaryDirectory(prefix="retrieval-eval-quantize-") as work:
        source = Path(work) / "model.onnx"
        target = Path(work) / "model.int8.onnx"
        source.write_bytes(model.SerializeToString())
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
