"""The installed FP32 graph against other ways of writing its attention, same run.

Rebuilds the encoder from the same weights with three forms of attention and times them
and the installed model.onnx interleaved, one onnxruntime thread, in CPU time
(``time.process_time``), on 256-token passages and on ~40-word ones:

- ``explicit``: standard ops, MatMul / Softmax / MatMul per head with the additive mask
  added to the [batch, heads, L, L] scores (what model_build writes);
- ``masked``: onnxruntime's MultiHeadAttention (domain com.microsoft) given the mask as
  its ``key_padding_mask`` input; onnxruntime then runs its unfused kernel, which
  writes the scores out and adds the mask to them;
- ``fused``: MultiHeadAttention without a mask input, so onnxruntime runs its fused
  (flash) kernel; the mask rides along as one more dimension of each head, 1 in every
  query and the mask value in every key, which adds exactly the mask to each score. The
  key's bias is dropped (softmax cancels it) and the value's is folded into the output
  projection's (each query's weights sum to 1).

Per model: texts per CPU-second (median of ``--runs``), the median of each run's ratio to
the installed graph, and the least cosine of its vectors to the installed graph's.

    taskset -c 0 .venv/bin/python bench/bench_attention.py [--runs 5] [--long 16] [--short 512]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper

from bench_embedding import passages
from cranfield_data import cranfield_beir
from retrieval_eval.index import model_build as mb
from retrieval_eval.index.model_catalog import ONNX_FILE
from retrieval_eval.index.model_install import default_model_dir, packaged_weights_dir
from retrieval_eval.index.text_embedding import TextEmbedding

Attention = Callable[["mb._GraphBuilder", str, str, str], str]
CONTRIB = "com.microsoft"
# The declared outputs of the contrib nodes of the graph being built.
VALUE_INFO: list[onnx.ValueInfoProto] = []


def _mask_bias(g: mb._GraphBuilder) -> str:
    """[batch, 1, 1, L]: 0 for a token, float32's minimum for padding."""
    mask = g.op("Cast", ["attention_mask"], to=TensorProto.FLOAT)
    inverted = g.op("Sub", [g.const("one", np.array(1.0, dtype=np.float32)), mask])
    bias = g.op("Mul", [inverted, g.const("mask_min", np.array(np.finfo(np.float32).min))])
    return g.op("Unsqueeze", [bias, g.const("mask_axes", np.array([1, 2], dtype=np.int64))])


def explicit_attention(g: mb._GraphBuilder, x: str, mask_bias: str, prefix: str) -> str:
    heads_shape = g.const(
        f"{prefix}.heads_shape", np.array([0, 0, mb.HEADS, mb.HEAD_DIM], np.int64)
    )
    merged_shape = g.const(f"{prefix}.merged_shape", np.array([0, 0, mb.HIDDEN], np.int64))

    def split_heads(name: str, perm: list[int]) -> str:
        projected = g.linear(x, f"{prefix}.attention.self.{name}")
        return g.op("Transpose", [g.op("Reshape", [projected, heads_shape])], perm=perm)

    query = split_heads("query", [0, 2, 1, 3])
    key = split_heads("key", [0, 2, 3, 1])
    value = split_heads("value", [0, 2, 1, 3])
    scale = g.const(f"{prefix}.scale", np.array(1.0 / np.sqrt(mb.HEAD_DIM), dtype=np.float32))
    scores = g.op("Add", [g.op("Mul", [g.op("MatMul", [query, key]), scale]), mask_bias])
    context = g.op("MatMul", [g.op("Softmax", [scores], axis=-1), value])
    context = g.op("Transpose", [context], perm=[0, 2, 1, 3])
    return g.op("Reshape", [context, merged_shape])


def _contrib(g: mb._GraphBuilder, op_type: str, inputs: list[str], **attributes: object) -> str:
    """A com.microsoft node whose [batch, sequence, hidden] float output is declared:
    onnx's shape inference does not know these ops, and the int8 quantizer needs the type."""
    output = f"{op_type.lower()}_{len(g.nodes)}"
    g.nodes.append(
        helper.make_node(op_type, inputs, [output], name=output, domain=CONTRIB, **attributes)  # type: ignore[arg-type]
    )
    VALUE_INFO.append(
        helper.make_tensor_value_info(output, TensorProto.FLOAT, ["batch", "sequence", mb.HIDDEN])
    )
    return output


def masked_attention(g: mb._GraphBuilder, x: str, mask: str, prefix: str) -> str:
    p = f"{prefix}.attention.self"
    names = ("query", "key", "value")
    projected = [g.op("MatMul", [x, g.weight(f"{p}.{n}.weight", transpose=True)]) for n in names]
    bias = g.const(f"{p}.bias", np.concatenate([g.weights[f"{p}.{n}.bias"] for n in names]))
    return _contrib(g, "MultiHeadAttention", [*projected, bias, mask], num_heads=mb.HEADS)


def _key_mask(g: mb._GraphBuilder) -> str:
    """[batch, sequence, heads · 33]: zero but for each head's extra key dimension, which
    is 0 for a token and float32's minimum for padding."""
    bias = g.op("Squeeze", [_mask_bias(g), g.const("mask_squeeze", np.array([1, 2], np.int64))])
    per_token = g.op("Unsqueeze", [bias, g.const("token_axes", np.array([2, 3], np.int64))])
    last = np.zeros((1, 1, 1, mb.HEAD_DIM + 1), dtype=np.float32)
    last[..., mb.HEAD_DIM] = 1.0
    column = g.op("Mul", [per_token, g.const("mask_column", last)])  # [batch, sequence, 1, 33]
    heads = g.const("mask_heads", np.array([mb.HEADS, mb.HEAD_DIM + 1], dtype=np.int64))
    shape = g.op("Concat", [g.op("Shape", ["input_ids"]), heads], axis=0)
    flat = g.const("mask_flat", np.array([0, 0, mb.HEADS * (mb.HEAD_DIM + 1)], dtype=np.int64))
    return g.op("Reshape", [g.op("Expand", [column, shape]), flat])


def _extra_dimension(array: np.ndarray, fill: float) -> np.ndarray:
    """``array``'s last axis (heads × 32, head-major) with one more value per head."""
    heads = array.reshape(*array.shape[:-1], mb.HEADS, mb.HEAD_DIM)
    extra = np.full((*heads.shape[:-1], 1), fill, dtype=np.float32)
    return np.concatenate([heads, extra], axis=-1).reshape(*array.shape[:-1], -1)


def fused_attention(g: mb._GraphBuilder, x: str, key_mask: str, prefix: str) -> str:
    p = f"{prefix}.attention.self"
    w = {name: g.weights[f"{p}.{name}.weight"].T for name in ("query", "key", "value")}
    query = g.op("MatMul", [x, g.const(f"{p}.query.weight", _extra_dimension(w["query"], 0))])
    bias = _extra_dimension(g.weights[f"{p}.query.bias"], 1)
    query = g.op("Add", [query, g.const(f"{p}.query.bias", bias)])
    key = g.op("MatMul", [x, g.const(f"{p}.key.weight", _extra_dimension(w["key"], 0))])
    value = g.op("MatMul", [x, g.const(f"{p}.value.weight", w["value"])])
    scale = float(1.0 / np.sqrt(mb.HEAD_DIM))
    return _contrib(
        g,
        "MultiHeadAttention",
        [query, g.op("Add", [key, key_mask]), value],
        num_heads=mb.HEADS,
        scale=scale,
    )


def _fold_value_bias(g: mb._GraphBuilder, prefix: str) -> None:
    """Move the value's bias b into the output projection's, b·W + c (in float64)."""
    dense = f"{prefix}.attention.output.dense"
    value_bias = g.weights.pop(f"{prefix}.attention.self.value.bias").astype(np.float64)
    g.weights[f"{dense}.bias"] = (
        value_bias @ g.weights[f"{dense}.weight"].T.astype(np.float64) + g.weights[f"{dense}.bias"]
    ).astype(np.float32)


def build(attention: Attention, mask: Callable[[mb._GraphBuilder], str]) -> bytes:
    """The encoder of model_build with ``attention`` (from Q/K/V to the merged context)."""
    g = mb._GraphBuilder(mb.read_safetensors(packaged_weights_dir() / "model.safetensors"))
    VALUE_INFO.clear()
    mask_input = mask(g)
    x = mb._embeddings(g)
    for layer in range(mb.LAYERS):
        prefix = f"encoder.layer.{layer}"
        if attention is fused_attention:
            _fold_value_bias(g, prefix)
        context = attention(g, x, mask_input, prefix)
        attended = g.linear(context, f"{prefix}.attention.output.dense")
        x = g.layer_norm(g.op("Add", [attended, x]), f"{prefix}.attention.output.LayerNorm")
        x = mb._feed_forward(g, x, prefix)
    g.nodes.append(helper.make_node("Identity", [x], ["last_hidden_state"], name="output"))
    inputs = [
        helper.make_tensor_value_info(name, TensorProto.INT64, ["batch", "sequence"])
        for name in ("input_ids", "attention_mask", "token_type_ids")
    ]
    output = helper.make_tensor_value_info(
        "last_hidden_state", TensorProto.FLOAT, ["batch", "sequence", mb.HIDDEN]
    )
    graph = helper.make_graph(
        g.nodes, "peer", inputs, [output], g.initializers, value_info=VALUE_INFO
    )
    opsets = [helper.make_opsetid("", mb.OPSET), helper.make_opsetid(CONTRIB, 1)]
    model = helper.make_model(graph, opset_imports=opsets, ir_version=mb.IR_VERSION)
    onnx.checker.check_model(model)
    return model.SerializeToString()


def _int32_mask(g: mb._GraphBuilder) -> str:
    return g.op("Cast", ["attention_mask"], to=TensorProto.INT32)


def _embedding(model_dir: Path, model: bytes | str) -> TextEmbedding:
    """TextEmbedding's session options, one thread, on ``model`` (bytes or a path)."""
    embedding = TextEmbedding(model_dir, intra_op_threads=1)
    options = ort.SessionOptions()
    options.log_severity_level = 3
    options.intra_op_num_threads = 1
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    embedding.__dict__["_session"] = ort.InferenceSession(
        model, options, providers=["CPUExecutionProvider"]
    )
    return embedding


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--long", type=int, default=16, help="256-token passages")
    parser.add_argument("--short", type=int, default=512, help="~40-word passages")
    args = parser.parse_args()
    model_dir = default_model_dir(Path.home())
    corpus = cranfield_beir() / "corpus.jsonl"
    sets = {
        "256 tokens": passages(corpus, args.long, 300),
        "~40 words": passages(corpus, args.short, 40),
    }
    models = {
        "installed": _embedding(model_dir, str(model_dir / ONNX_FILE)),
        "explicit": _embedding(model_dir, build(explicit_attention, _mask_bias)),
        "masked": _embedding(model_dir, build(masked_attention, _int32_mask)),
        "fused": _embedding(model_dir, build(fused_attention, _key_mask)),
    }
    for model in models.values():
        for texts in sets.values():
            model.embed(texts[:8])
    seconds = {(name, kind): [] for name in models for kind in sets}
    vectors = {}
    for _ in range(args.runs):
        for name, model in models.items():
            for kind, texts in sets.items():
                started = time.process_time()
                vectors[name, kind] = model.embed(texts)
                seconds[name, kind].append(time.process_time() - started)
    print(
        f"load average {os.getloadavg()[0]:.1f}, {args.runs} runs (medians, CPU time, one "
        f"thread), {args.long} passages of 256 tokens, {args.short} of ~40 words\n"
    )
    print(
        "| graph | "
        + " | ".join(f"{k} texts/CPU-s | × installed" for k in sets)
        + " | least cosine |"
    )
    print("| --- |" + " ---: | ---: |" * len(sets) + " ---: |")
    for name in models:
        cells = []
        for kind, texts in sets.items():
            ratio = statistics.median(
                base / mine
                for base, mine in zip(seconds["installed", kind], seconds[name, kind], strict=True)
            )
            cells.append(
                f"{len(texts) / statistics.median(seconds[name, kind]):.2f} | {ratio:.3f}×"
            )
        least = min(
            float((vectors[name, kind] * vectors["installed", kind]).sum(1).min()) for kind in sets
        )
        print(f"| {name} | " + " | ".join(cells) + f" | {least:.7f} |", flush=True)


if __name__ == "__main__":
    main()
