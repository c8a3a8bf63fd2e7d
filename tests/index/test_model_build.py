"""The hand-built ONNX graph computes BERT: checked against an independent numpy forward pass."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import onnxruntime as ort
import pytest

from retrieval_eval.errors import InputError
from retrieval_eval.index.model_build import WORD_EMBEDDINGS, read_safetensors
from retrieval_eval.index.model_install import packaged_weights_dir

_erf = np.vectorize(math.erf)


def _reference_bert(
    weights: dict[str, np.ndarray], ids: np.ndarray, mask: np.ndarray
) -> np.ndarray:
    """BertModel's forward pass in float64 numpy, written from the paper's equations."""
    w = {name: value.astype(np.float64) for name, value in weights.items()}
    batch, seq = ids.shape

    def layer_norm(x: np.ndarray, prefix: str) -> np.ndarray:
        mean = x.mean(-1, keepdims=True)
        var = ((x - mean) ** 2).mean(-1, keepdims=True)
        normalised: np.ndarray = (x - mean) / np.sqrt(var + 1e-12)
        return normalised * w[f"{prefix}.weight"] + w[f"{prefix}.bias"]

    def linear(x: np.ndarray, prefix: str) -> np.ndarray:
        return x @ w[f"{prefix}.weight"].T + w[f"{prefix}.bias"]

    x = (
        w["embeddings.word_embeddings.weight"][ids]
        + w["embeddings.position_embeddings.weight"][:seq]
        + w["embeddings.token_type_embeddings.weight"][0]
    )
    x = layer_norm(x, "embeddings.LayerNorm")
    blocked = (mask == 0)[:, None, None, :]
    for layer in range(6):
        p = f"encoder.layer.{layer}"

        def heads(name: str, x: np.ndarray = x, p: str = p) -> np.ndarray:
            projected = linear(x, f"{p}.attention.self.{name}")
            return projected.reshape(batch, seq, 12, 32).transpose(0, 2, 1, 3)

        q, k, v = heads("query"), heads("key"), heads("value")
        scores = np.where(blocked, -np.inf, q @ k.transpose(0, 1, 3, 2) / math.sqrt(32))
        probs = np.exp(scores - scores.max(-1, keepdims=True))
        probs /= probs.sum(-1, keepdims=True)
        context = (probs @ v).transpose(0, 2, 1, 3).reshape(batch, seq, 384)
        x = layer_norm(
            linear(context, f"{p}.attention.output.dense") + x, f"{p}.attention.output.LayerNorm"
        )
        hidden = linear(x, f"{p}.intermediate.dense")
        hidden = 0.5 * hidden * (1 + _erf(hidden / math.sqrt(2)))
        x = layer_norm(linear(hidden, f"{p}.output.dense") + x, f"{p}.output.LayerNorm")
    return x


def test_onnx_graph_matches_numpy_bert_including_padding(model_dir: Path) -> None:
    weights = read_safetensors(packaged_weights_dir() / "model.safetensors")
    # The model stores the word-piece table as float16 (model_build): the reference
    # computes with the same rounded table, all else in float64.
    table = weights[WORD_EMBEDDINGS]
    weights[WORD_EMBEDDINGS] = table.astype(np.float16).astype(np.float32)
    # [CLS] the boundary layer [SEP] padded, next to a full-width row.
    ids = np.array([[101, 1996, 6192, 6741, 102, 0, 0], [101, 2023, 2003, 1037, 3231, 6251, 102]])
    mask = (ids != 0).astype(np.int64)
    session = ort.InferenceSession(
        str(model_dir / "model.onnx"), providers=["CPUExecutionProvider"]
    )
    (hidden,) = session.run(
        None, {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
    )
    assert hidden.shape == (2, 7, 384)
    expected = _reference_bert(weights, ids, mask)
    real = mask.astype(bool)
    assert np.abs(hidden[real] - expected[real]).max() < 1e-4
    # Padding must be invisible: the padded row equals the same sentence run unpadded.
    (alone,) = session.run(
        None,
        {
            "input_ids": ids[:1, :5],
            "attention_mask": mask[:1, :5],
            "token_type_ids": np.zeros((1, 5), dtype=np.int64),
        },
    )
    assert np.abs(alone[0] - hidden[0, :5]).max() < 1e-5


def test_truncated_safetensors_is_a_clear_error(tmp_path: Path) -> None:
    broken = tmp_path / "model.safetensors"
    broken.write_bytes(b"\x10\x00")
    with pytest.raises(InputError) as caught:
        read_safetensors(broken)
    assert str(caught.value) == f"{broken}: not a safetensors file (shorter than its 8-byte header)"


def test_safetensors_with_garbage_header_is_a_clear_error(tmp_path: Path) -> None:
    broken = tmp_path / "model.safetensors"
    broken.write_bytes((5).to_bytes(8, "little") + b"nope!")
    with pytest.raises(InputError, match=r"not a safetensors file \(bad JSON header"):
        read_safetensors(broken)
