"""The arithmetic limit of one core: FP32 and int8 matrix products, per CPU-second.

Embedding a 256-token text with all-MiniLM-L6-v2 is matrix products (6.04 GFLOP a text,
docs/benchmarks.md "The limit"), so the fastest a core can embed is its matrix-product
rate divided by that. This measures the rate four ways, single-threaded, each the median
of ``--runs`` timings in CPU time (``time.process_time``, so other jobs on a shared
machine slow the wall clock but not the figure):

- numpy FP32 ``a @ b`` (its BLAS, one thread) on square and on the model's shapes;
- onnxruntime FP32 ``MatMul`` (the kernels the model itself runs) on the model's shapes;
- onnxruntime int8 ``MatMulInteger`` (uint8 × int8 → int32, what dynamic quantization
  runs; AVX-512 VNNI or AVX-VNNI when ``lscpu`` lists them) on the model's shapes.

The model's shapes are its largest products for a batch of 8 texts × 256 tokens: the
feed-forward layers, [2048 × 384] · [384 × 1536] and [2048 × 1536] · [1536 × 384].
A multiply-add counts as 2 operations.

``--embed N`` also embeds N 256-token passages with the installed FP32 model and the int8
copy (one onnxruntime thread each, interleaved with the kernels above, so load hits all
alike) and prints each as GFLOP/s and as a fraction of the measured rates.

    taskset -c 1 .venv/bin/python bench/bench_peak.py [--runs 7] [--embed 32]
"""

from __future__ import annotations

import os

# One BLAS thread: set before numpy loads its BLAS.
for _name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_name] = "1"

import argparse  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import onnxruntime as ort  # noqa: E402
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

LAYERS, HIDDEN, INTERMEDIATE, TOKENS = 6, 384, 1536, 256
# Per token: Q, K, V and output projections (4·H²) and the feed-forward pair (2·H·I), as
# multiply-adds; per text: attention's two [L × L] products per layer (2·L²·H).
LINEAR_FLOP_PER_TOKEN = 2 * LAYERS * (4 * HIDDEN**2 + 2 * HIDDEN * INTERMEDIATE)
ATTENTION_FLOP = 2 * LAYERS * 2 * TOKENS**2 * HIDDEN
FLOP_PER_TEXT = LINEAR_FLOP_PER_TOKEN * TOKENS + ATTENTION_FLOP  # 6.04 GFLOP

# (rows, inner, columns) of the model's feed-forward products at 8 texts × 256 tokens.
MODEL_SHAPES = ((2048, 384, 1536), (2048, 1536, 384))
SQUARE = (2048, 2048, 2048)


def _cpu_seconds(call: Callable[[], object], runs: int) -> float:
    call()  # first-call allocations and weight packing
    times = []
    for _ in range(runs):
        started = time.process_time()
        call()
        times.append(time.process_time() - started)
    return statistics.median(times)


def _session(op: str, b: np.ndarray) -> ort.InferenceSession:
    """``a`` times the constant ``b`` (a weight, as in the model: pre-packed once)."""
    a_type, out_type = (
        (TensorProto.FLOAT, TensorProto.FLOAT)
        if op == "MatMul"
        else (TensorProto.UINT8, TensorProto.INT32)
    )
    node = helper.make_node(op, ["a", "b"], ["y"])
    graph = helper.make_graph(
        [node],
        "matmul",
        [helper.make_tensor_value_info("a", a_type, ["m", b.shape[0]])],
        [helper.make_tensor_value_info("y", out_type, ["m", b.shape[1]])],
        initializer=[numpy_helper.from_array(b, "b")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    options.log_severity_level = 3
    return ort.InferenceSession(
        model.SerializeToString(), options, providers=["CPUExecutionProvider"]
    )


def _rate(shape: tuple[int, int, int], seconds: float) -> float:
    rows, inner, columns = shape
    return 2 * rows * inner * columns / seconds / 1e9


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--embed", type=int, default=0, help="256-token passages to embed")
    parser.add_argument(
        "--int8-dir", type=Path, default=None, help="the int8 copy's folder (default: its own)"
    )
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    flags = subprocess.run(["lscpu"], capture_output=True, text=True, check=False).stdout
    vnni = [flag for flag in ("avx512_vnni", "avx_vnni") if f" {flag}" in flags]
    print(
        f"load average {os.getloadavg()[0]:.1f}, VNNI flags: {', '.join(vnni) or 'none'}, "
        f"{args.runs} runs (medians, CPU time, one thread)\n"
    )
    print("| kernel | shape (m × k × n) | G(FL)OP/s |")
    print("| --- | --- | ---: |")
    rates: dict[str, list[float]] = {}
    for shape in (SQUARE, *MODEL_SHAPES):
        rows, inner, columns = shape
        a = rng.standard_normal((rows, inner), dtype=np.float32)
        b = rng.standard_normal((inner, columns), dtype=np.float32)
        label = " × ".join(str(n) for n in shape)
        seconds = _cpu_seconds(lambda a=a, b=b: a @ b, args.runs)
        print(f"| numpy FP32 | {label} | {_rate(shape, seconds):.1f} |", flush=True)
        rates.setdefault("numpy", []).append(_rate(shape, seconds))
        if shape == SQUARE:
            continue
        fp32 = _session("MatMul", b)
        seconds = _cpu_seconds(lambda a=a, s=fp32: s.run(None, {"a": a}), args.runs)
        print(f"| onnxruntime FP32 MatMul | {label} | {_rate(shape, seconds):.1f} |", flush=True)
        rates.setdefault("ort", []).append(_rate(shape, seconds))
        a8 = rng.integers(0, 256, (rows, inner), dtype=np.uint8)
        b8 = rng.integers(-128, 128, (inner, columns), dtype=np.int8)
        int8 = _session("MatMulInteger", b8)
        seconds = _cpu_seconds(lambda a=a8, s=int8: s.run(None, {"a": a}), args.runs)
        print(
            f"| onnxruntime int8 MatMulInteger | {label} | {_rate(shape, seconds):.1f} |",
            flush=True,
        )
        rates.setdefault("int8", []).append(_rate(shape, seconds))
    if args.embed:
        _embedding_rows(args.embed, args.runs, rates, args.int8_dir)


def _embedding_rows(
    count: int, runs: int, rates: dict[str, list[float]], int8_dir: Path | None
) -> None:
    """Texts per CPU-second of the FP32 and int8 models, and what fraction of the
    kernels' rates that is (numpy's best FP32 rate; the int8 kernel's mean on the model's
    shapes for the int8 model, whose attention products stay FP32)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from bench_embedding import passages
    from cranfield_data import cranfield_beir
    from retrieval_eval.index.model_catalog import INT8_MODEL
    from retrieval_eval.index.model_install import default_model_dir, install_model
    from retrieval_eval.index.model_quantize import quantized_model_dir
    from retrieval_eval.index.text_embedding import TextEmbedding

    fp32_dir = default_model_dir(Path.home())
    int8_dir = int8_dir or quantized_model_dir(fp32_dir)
    install_model(int8_dir, quantize="int8")
    texts = passages(cranfield_beir() / "corpus.jsonl", count, 300)
    models = {
        "FP32": TextEmbedding(fp32_dir, intra_op_threads=1),
        "int8": TextEmbedding(int8_dir, intra_op_threads=1, model=INT8_MODEL),
    }
    for model in models.values():
        model.embed(texts[:4])
    seconds = {
        name: _cpu_seconds(lambda m=model: m.embed(texts), runs) for name, model in models.items()
    }
    numpy_peak = max(rates["numpy"])
    ort_fp32 = statistics.fmean(rates["ort"])
    int8_peak = statistics.fmean(rates["int8"])
    print(
        f"\n{count} passages of {TOKENS} tokens, {FLOP_PER_TEXT / 1e9:.2f} GFLOP a text "
        f"(FP32 limit {numpy_peak * 1e9 / FLOP_PER_TEXT:.1f} texts/CPU-s at numpy's "
        f"{numpy_peak:.1f} GFLOP/s)\n"
    )
    print(
        "| model | texts/CPU-s | GFLOP/s | of numpy FP32 peak | of onnxruntime FP32 MatMul "
        "| of int8 MatMulInteger |"
    )
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for name, cpu in seconds.items():
        per_second = count / cpu
        flops = per_second * FLOP_PER_TEXT / 1e9
        print(
            f"| {name} | {per_second:.2f} | {flops:.1f} | {flops / numpy_peak:.0%} | "
            f"{flops / ort_fp32:.0%} | {flops / int8_peak:.0%} |"
        )


if __name__ == "__main__":
    main()
