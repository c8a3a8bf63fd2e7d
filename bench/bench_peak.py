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

    .venv/bin/python bench/bench_peak.py [--runs 7]
"""

from __future__ import annotations

import os

# One BLAS thread: set before numpy loads its BLAS.
for _name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_name] = "1"

import argparse  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable  # noqa: E402

import numpy as np  # noqa: E402
import onnxruntime as ort  # noqa: E402
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

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
    for shape in (SQUARE, *MODEL_SHAPES):
        rows, inner, columns = shape
        a = rng.standard_normal((rows, inner), dtype=np.float32)
        b = rng.standard_normal((inner, columns), dtype=np.float32)
        label = " × ".join(str(n) for n in shape)
        seconds = _cpu_seconds(lambda a=a, b=b: a @ b, args.runs)
        print(f"| numpy FP32 | {label} | {_rate(shape, seconds):.1f} |", flush=True)
        if shape == SQUARE:
            continue
        fp32 = _session("MatMul", b)
        seconds = _cpu_seconds(lambda a=a, s=fp32: s.run(None, {"a": a}), args.runs)
        print(f"| onnxruntime FP32 MatMul | {label} | {_rate(shape, seconds):.1f} |", flush=True)
        a8 = rng.integers(0, 256, (rows, inner), dtype=np.uint8)
        b8 = rng.integers(-128, 128, (inner, columns), dtype=np.int8)
        int8 = _session("MatMulInteger", b8)
        seconds = _cpu_seconds(lambda a=a8, s=int8: s.run(None, {"a": a}), args.runs)
        print(
            f"| onnxruntime int8 MatMulInteger | {label} | {_rate(shape, seconds):.1f} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
