"""The int8 recipe's smoothing: lossless in FP32, and tied to the model it was made for."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest

from retrieval_eval.index.model_quantize import apply_smoothing, smoothing, weight_matmuls
from retrieval_eval.index.text_embedding import TextEmbedding

TEXTS = [
    "Temples, maple leaves and the bamboo grove in Arashiyama.",
    "the boundary layer on a flat plate at supersonic speed separates ahead of the shock",
    "Switch the router between two identical environments.",
    " ".join(["heat transfer in laminar flow over a cone at high mach number"] * 30),
]


def test_smoothing_alone_leaves_the_fp32_vectors_as_they_were(model_dir: Path) -> None:
    """Dividing activations and multiplying weights by the same powers of two is exact,
    so all the int8 copy's loss is the quantizer's."""
    model = onnx.load(str(model_dir / "model.onnx"))
    apply_smoothing(model, smoothing())
    assert sum(node.name.startswith("smoothing_") for node in model.graph.node) == len(
        weight_matmuls(onnx.load(str(model_dir / "model.onnx")))
    )
    fp32 = TextEmbedding(model_dir)
    smoothed = TextEmbedding(model_dir)
    smoothed.__dict__["_session"] = ort.InferenceSession(
        model.SerializeToString(), providers=["CPUExecutionProvider"]
    )
    cosines = np.sum(fp32.embed(TEXTS) * smoothed.embed(TEXTS), axis=1)
    assert cosines.min() >= 0.99999


def test_exponents_for_other_activations_are_refused(model_dir: Path) -> None:
    model = onnx.load(str(model_dir / "model.onnx"))
    exponents = smoothing()
    name = next(iter(exponents))
    with pytest.raises(ValueError, match="missing"):
        apply_smoothing(model, {key: value for key, value in exponents.items() if key != name})
    with pytest.raises(ValueError, match="smoothing exponents for"):
        apply_smoothing(model, {**exponents, name: exponents[name][:-1]})
