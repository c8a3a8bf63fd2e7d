"""The int8 model against FP32, same run: texts/s on 256-token passages, NDCG@10 on Cranfield.

The int8 copy is what `retrieval-eval model install --quantize int8` builds; both
models run with the same thread count, interleaved so a load spike on a shared
machine hits both alike. Quality is the dense retriever's NDCG@10 on Cranfield
(the in-repo copy under tests/data), which is deterministic for each model.

    .venv/bin/python bench/bench_quantized.py [--runs 5] [--passages 128] [--threads 2]

``--variants`` compares quantization recipes instead, each built from the FP32 model in a
temporary folder (nothing is installed): per variant, 256-token texts per CPU-second
(interleaved with FP32, one thread unless ``--threads``; pin with ``taskset -c 1``), the
least and mean cosine between its vectors and FP32's on those texts, and NDCG@10 of the
dense retriever with it on each ``--dataset`` (a BEIR folder; default: the in-repo
Cranfield copy); also the least cosine on short texts (the first dataset's queries and
the repository's datasets: its queries and its documents). A variant is ``int8`` (what
`model install --quantize int8` builds; ``int8:block=N``: with one word-piece table scale
per N entries of a row instead), ``fp32-table`` (the FP32 model with its word-piece
table back in float32, as it was built before the table was stored as float16), ``fused``
(FP32 through onnxruntime.transformers' fusions), or ``dynamic`` or ``static`` with
``:``-separated options:
``pc`` per-channel weights; ``rr`` reduced range (7-bit); ``minmax``, ``entropy`` or
``percentile`` (static calibration, default minmax); ``smooth[=alpha]`` applies
SmoothQuant's migration first (alpha 0.5 unless given; calibrated like static; ``p2``
rounds its factors to powers of two); ``attn``
also quantizes attention's two activation products; ``keep=A+B`` keeps in FP32 every
MatMul whose weight name contains A or B (e.g. ``output.dense``, ``layer.5.``,
``attention.output``). Static and smoothed variants calibrate on ``--calibration``
256-token windows of the first dataset's corpus.

    taskset -c 1 .venv/bin/python bench/bench_quantized.py --threads 1 --runs 3 \
        --variants dynamic,dynamic:pc,static:pc --dataset DIR [--dataset DIR2]
    taskset -c 1 .venv/bin/python bench/bench_quantized.py --threads 1 --runs 5 \
        --variants fp32-table,int8 --dataset DIR [--dataset DIR2]
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import re
import statistics
import sys
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import numpy as np  # noqa: E402
import onnx  # noqa: E402
import onnxruntime as ort  # noqa: E402
from tests.data.cranfield import unpack_cranfield  # noqa: E402

from retrieval_eval.index.embedding import MiniLMEmbedding, available_cores  # noqa: E402
from retrieval_eval.index.model_catalog import DEFAULT_MODEL, INT8_MODEL  # noqa: E402
from retrieval_eval.index.model_install import (  # noqa: E402
    TOKENIZER_FILES,
    default_model_dir,
    install_model,
)
from retrieval_eval.index.model_quantize import quantize_int8, quantized_model_dir  # noqa: E402
from retrieval_eval.index.text_embedding import TextEmbedding  # noqa: E402
from retrieval_eval.load.beir import load_beir  # noqa: E402
from retrieval_eval.retrieval.builtin.dense import DenseRetriever  # noqa: E402
from retrieval_eval.retrieval.config import RetrieversConfig  # noqa: E402
from retrieval_eval.retrieval.defaults import resolve_defaults  # noqa: E402
from retrieval_eval.retrieval.registry import (  # noqa: E402
    build_retriever,
    close_retriever,
)
from retrieval_eval.retrieval.timed import QuerySpec, run_queries, time_index  # noqa: E402
from retrieval_eval.score.query_scores import score_queries  # noqa: E402


def long_passages(corpus: Path, count: int, *, reverse: bool = False) -> list[str]:
    """Consecutive Cranfield sentences, 300 words each: always past 256 word pieces
    (from the last document backwards with ``reverse``)."""
    words: list[str] = []
    result: list[str] = []
    with corpus.open(encoding="utf-8") as handle:
        lines = handle.readlines()
        for line in reversed(lines) if reverse else lines:
            for sentence in re.split(r"(?<=\.)\s+", json.loads(line)["text"]):
                words += sentence.split()
                if len(words) >= 300:
                    result.append(" ".join(words[:300]))
                    words = []
                    if len(result) == count:
                        return result
    raise SystemExit(f"only {len(result)} passages of 300 words")


MODEL_OF = {"fp32": DEFAULT_MODEL, "int8": INT8_MODEL}


def short_texts(dataset: Path) -> list[str]:
    """The queries of the BEIR folder ``dataset`` and of the repository's datasets, and
    the repository's documents (most shorter than the 256-token window)."""
    queries = (dataset / "queries.jsonl").read_text(encoding="utf-8").splitlines()
    texts = [json.loads(line)["text"] for line in queries if line.strip()]
    for path in sorted((REPO / "datasets").glob("*.jsonl")):
        lines = path.read_text(encoding="utf-8").splitlines()
        texts += [json.loads(line)["query"] for line in lines if line.strip()]
    documents = sorted((REPO / "datasets" / "corpus").rglob("*.md"))
    return texts + [path.read_text(encoding="utf-8") for path in documents]


def float32_table(fp32: Path, target: Path) -> None:
    """The model at ``fp32`` with its word-piece table as float32 from the weights: the
    lookup's Cast to float32 is then a copy, so this computes what the build computed
    before it stored the table as float16."""
    from onnx import numpy_helper

    from retrieval_eval.index.model_build import WORD_EMBEDDINGS, read_safetensors
    from retrieval_eval.index.model_install import packaged_weights_dir

    model = onnx.load(str(fp32))
    weights = read_safetensors(packaged_weights_dir() / "model.safetensors")
    [table] = [init for init in model.graph.initializer if init.name == WORD_EMBEDDINGS]
    table.CopyFrom(numpy_helper.from_array(weights[WORD_EMBEDDINGS], WORD_EMBEDDINGS))
    onnx.save(model, str(target))


def ndcg(model_dir: Path, model: str, dataset: Path, threads: int) -> tuple[float, float]:
    data = load_beir(dataset)
    config = resolve_defaults(RetrieversConfig(), home=Path.home(), cores=threads)
    update = {"model": model, "model_dir": model_dir, "threads": threads}
    dense = config.dense.model_copy(update=update)
    config = config.model_copy(update={"dense": dense})
    retriever = build_retriever("dense", config)
    index_s = time_index(retriever, data.corpus)
    timed = run_queries(retriever, [QuerySpec(q, t) for q, t in data.queries.items()], 10)
    close_retriever(retriever)
    ranking = {t.query_id: [hit.doc_id for hit in t.result.hits] for t in timed}
    scores = score_queries(data.qrels, ranking, ["ndcg@10"])["ndcg@10"]
    return statistics.fmean(scores.get(q, 0.0) for q in data.qrels), index_s


def _session(path: Path, threads: int) -> ort.InferenceSession:
    options = ort.SessionOptions()
    options.log_severity_level = 3
    options.intra_op_num_threads = threads
    return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])


class _Calibration:
    """onnxruntime's calibration-reader protocol over texts, tokenized as we embed them."""

    def __init__(self, model_dir: Path, texts: list[str], batch: int = 1) -> None:
        embedding = TextEmbedding(model_dir)
        assert embedding._tokenizer is not None
        encodings = embedding._tokenizer.encode_batch(texts, add_special_tokens=True)
        encodings.sort(key=lambda encoding: len(encoding.ids))
        self._feeds = []
        for start in range(0, len(encodings), batch):
            part = encodings[start : start + batch]
            width = max(len(encoding.ids) for encoding in part)
            ids = np.zeros((len(part), width), dtype=np.int64)
            mask = np.zeros_like(ids)
            for row, encoding in enumerate(part):
                ids[row, : len(encoding.ids)] = encoding.ids
                mask[row, : len(encoding.ids)] = 1
            feed = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
            self._feeds.append(feed)
        self._next = iter(self._feeds)

    def get_next(self) -> dict[str, np.ndarray] | None:
        return next(self._next, None)

    def rewind(self) -> None:
        self._next = iter(self._feeds)


def fuse_transformer(fp32: Path, target: Path) -> None:
    """onnxruntime.transformers' BERT fusions (without symbolic shape inference, which
    needs sympy): what it fuses here is SkipLayerNormalization and BiasGelu; the
    attention pattern of this export is not one it recognizes."""
    from onnxruntime.transformers import optimizer
    from onnxruntime.transformers.fusion_options import FusionOptions

    options = FusionOptions("bert")
    options.enable_shape_inference = False
    model = optimizer.optimize_model(
        str(fp32),
        model_type="bert",
        num_heads=12,
        hidden_size=384,
        optimization_options=options,
        opt_level=0,
        use_gpu=False,
    )
    model.save_model_to_file(str(target))


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


def calibration_peaks(fp32: Path, calibration: list[str]) -> dict[str, np.ndarray]:
    """max|X_j| over the calibration texts of every activation a weight MatMul reads."""
    import onnx
    from onnx import helper

    probe = onnx.load(str(fp32))
    names = list(weight_matmuls(probe))
    for name in names:
        probe.graph.output.append(helper.make_value_info(name, onnx.TypeProto()))
    session = ort.InferenceSession(probe.SerializeToString(), providers=["CPUExecutionProvider"])
    peaks: dict[str, np.ndarray] = {}
    reader = _Calibration(fp32.parent, calibration)
    while (feed := reader.get_next()) is not None:
        for name, value in zip(names, session.run(names, feed), strict=True):
            peak = np.abs(value).reshape(-1, value.shape[-1]).max(0)
            peaks[name] = np.maximum(peaks.get(name, peak), peak)
    return peaks


def smooth(
    fp32: Path, target: Path, calibration: list[str], alpha: float, *, power_of_two: bool
) -> None:
    """SmoothQuant's migration (smoothing_exponents), with the factors as powers of two,
    or (``power_of_two`` False) as the exact floats."""
    import onnx
    from onnx import numpy_helper

    model = onnx.load(str(fp32))
    peaks = calibration_peaks(fp32, calibration)
    if power_of_two:
        apply_smoothing(model, smoothing_exponents(model, peaks, alpha))
        onnx.save(model, str(target))
        return
    weights = {init.name: init for init in model.graph.initializer}
    for name, nodes in weight_matmuls(model).items():
        arrays = [numpy_helper.to_array(weights[node.input[1]]) for node in nodes]
        w_peak = np.maximum(np.max([np.abs(a).max(1) for a in arrays], axis=0), 1e-8)
        scale = np.maximum(peaks[name], 1e-8) ** alpha / w_peak ** (1 - alpha)
        # Scaling the weights by the float factors; the activations by their inverse
        # through apply_smoothing's Mul, with exponent 0 (no change) and the inverse
        # replaced afterwards.
        for node, array in zip(nodes, arrays, strict=True):
            weights[node.input[1]].CopyFrom(
                numpy_helper.from_array(array * scale[:, None], node.input[1])
            )
        peaks[name] = scale.astype(np.float32)
    apply_smoothing(model, {name: [0] * len(scale) for name, scale in peaks.items()})
    inverses = {init.name: init for init in model.graph.initializer}
    for index, name in enumerate(weight_matmuls(onnx.load(str(fp32)))):
        inverse = inverses[f"smoothing_{index}.inverse"]
        inverse.CopyFrom(numpy_helper.from_array(1.0 / peaks[name], inverse.name))
    onnx.save(model, str(target))


def build_variant(variant: str, fp32: Path, target: Path, calibration: list[str]) -> None:
    """Write the ``variant`` quantization (syntax: the module docstring) of ``fp32``."""
    import onnx
    from onnxruntime.quantization import (
        CalibrationMethod,
        QuantFormat,
        QuantType,
        quantize_dynamic,
        quantize_static,
    )

    if variant.startswith("int8"):
        block = variant.partition(":block=")[2]
        options = {"table_block": int(block)} if block else {}
        target.write_bytes(quantize_int8(fp32.read_bytes(), **options))
        return
    if variant == "fp32-table":
        float32_table(fp32, target)
        return
    kind, *options = variant.split(":")
    keep: list[str] = []
    for option in options:
        if option.startswith("keep="):
            keep += option.removeprefix("keep=").split("+")
    for option in options:
        if option.startswith("smooth"):
            alpha = float(option.partition("=")[2] or 0.5)
            smoothed = target.with_name("smoothed.onnx")
            smooth(fp32, smoothed, calibration, alpha, power_of_two="p2" in options)
            fp32 = smoothed
    graph = onnx.load(str(fp32)).graph
    weights = {init.name for init in graph.initializer}
    excluded = [
        node.name
        for node in graph.node
        if node.op_type == "MatMul"
        and any(w in weights and any(k in w for k in keep) for w in node.input)
    ]
    extra = {"MatMulConstBOnly": "attn" not in options}
    common = {
        "per_channel": "pc" in options,
        "reduce_range": "rr" in options,
        "nodes_to_exclude": excluded,
        "op_types_to_quantize": ["MatMul"],
        "extra_options": extra,
    }
    root = logging.getLogger()
    level = root.level
    root.setLevel(logging.ERROR)
    try:
        if kind == "fused":
            fuse_transformer(fp32, target)
        elif kind == "dynamic":
            quantize_dynamic(fp32, target, weight_type=QuantType.QInt8, **common)  # type: ignore[arg-type]
        elif kind == "static":
            method = next(
                (m for m in ("minmax", "entropy", "percentile") if m in options), "minmax"
            )
            methods = {
                "minmax": CalibrationMethod.MinMax,
                "entropy": CalibrationMethod.Entropy,
                "percentile": CalibrationMethod.Percentile,
            }
            quantize_static(
                fp32,
                target,
                _Calibration(fp32.parent, calibration),  # type: ignore[arg-type]
                quant_format=QuantFormat.QDQ,
                activation_type=QuantType.QUInt8,
                weight_type=QuantType.QInt8,
                calibrate_method=methods[method],
                **common,  # type: ignore[arg-type]
            )
        else:
            raise SystemExit(f"unknown variant kind {kind!r} (dynamic or static)")
    finally:
        root.setLevel(level)


def _swapped_retriever(path: Path, threads: int) -> type[DenseRetriever]:
    """A dense retriever whose embedding runs the model at ``path`` (verified as FP32's
    folder, so an unpinned variant can be measured without installing it)."""

    class Variant(TextEmbedding):
        @property
        def _session(self) -> ort.InferenceSession:  # type: ignore[override]
            if "_variant" not in self.__dict__:
                self.__dict__["_variant"] = _session(path, threads)
            return self.__dict__["_variant"]  # type: ignore[no-any-return]

    class Retriever(DenseRetriever):
        def _embedding_class(self) -> type[TextEmbedding]:
            return Variant

    return Retriever


def variant_ndcg(path: Path, fp32_dir: Path, dataset: Path, threads: int) -> float:
    data = load_beir(dataset)
    config = resolve_defaults(RetrieversConfig(), home=Path.home(), cores=threads)
    update = {"model": DEFAULT_MODEL, "model_dir": fp32_dir, "threads": threads}
    dense = config.dense.model_copy(update=update)
    retriever = _swapped_retriever(path, threads)(dense)
    retriever.index(data.corpus)
    results = retriever.search_many([(text, ()) for text in data.queries.values()], 10)
    ranking = {
        query: [hit.doc_id for hit in result.hits]
        for query, result in zip(data.queries, results, strict=True)
    }
    scores = score_queries(data.qrels, ranking, ["ndcg@10"])["ndcg@10"]
    return statistics.fmean(scores.get(q, 0.0) for q in data.qrels)


def compare_variants(args: argparse.Namespace, fp32_dir: Path, datasets: list[Path]) -> None:
    # Calibration reads 256-token windows from the corpus's end, the speed and cosine
    # texts from its start, so the cosines are measured on text calibration never saw.
    calibrate_on = args.calibrate_on or datasets[0]
    calibration = long_passages(calibrate_on / "corpus.jsonl", args.calibration, reverse=True)
    texts = long_passages(datasets[0] / "corpus.jsonl", args.passages)
    short = short_texts(datasets[0])
    with tempfile.TemporaryDirectory(prefix="retrieval-eval-variants-") as work:
        # A copy to quantize from: the quantizer writes scratch files beside its source.
        fp32_path = Path(work) / "fp32" / "model.onnx"
        fp32_path.parent.mkdir()
        for name in ("model.onnx", *TOKENIZER_FILES):
            (fp32_path.parent / name).write_bytes((fp32_dir / name).read_bytes())
        paths = {"fp32": fp32_path}
        for variant in args.variants.split(","):
            target = Path(work) / f"{len(paths)}" / "model.onnx"
            target.parent.mkdir()
            for name in ("tokenizer.json", "config.json"):
                (target.parent / name).write_bytes((fp32_dir / name).read_bytes())
            started = time.process_time()
            build_variant(variant, fp32_path, target, calibration)
            print(f"built {variant} in {time.process_time() - started:.0f} CPU-s", flush=True)
            paths[variant] = target
        models = {}
        for name, path in paths.items():
            embedding = TextEmbedding(fp32_dir, intra_op_threads=args.threads)
            embedding.__dict__["_session"] = _session(path, args.threads)
            embedding.embed(texts[:8])
            models[name] = embedding
        seconds: dict[str, list[float]] = {name: [] for name in models}
        vectors = {}
        for _ in range(args.runs):
            for name, model in models.items():
                started = time.process_time()
                vectors[name] = model.embed(texts)
                seconds[name].append(time.process_time() - started)
        rate = {name: len(texts) / statistics.median(times) for name, times in seconds.items()}
        short_vectors = {name: model.embed(short) for name, model in models.items()}
        # A BEIR folder is often <name>/beir: name it by its parent then.
        names = [d.parent.name if d.name == "beir" else d.name for d in [*datasets, calibrate_on]]
        header = " | ".join(f"NDCG@10 {name} (Δ)" for name in names[:-1])
        print(
            f"\nthreads {args.threads}, {len(texts)} passages of 256 tokens, {args.runs} runs "
            f"(medians, CPU time), {len(short)} short texts, "
            f"calibration {len(calibration)} texts of {names[-1]}, "
            f"load average {os.getloadavg()[0]:.1f}\n"
        )
        print(
            "| variant | texts/CPU-s | vs FP32 | least cosine | mean cosine "
            f"| least cosine, short | {header} |"
        )
        print("| --- | ---: | ---: | ---: | ---: | ---: |" + " ---: |" * len(datasets))
        base: dict[Path, float] = {}
        for name, path in paths.items():
            # In float64, so a cosine within 1e-7 of 1 is not rounded away.
            cosine = (vectors[name].astype(np.float64) * vectors["fp32"]).sum(1)
            short_cosine = (short_vectors[name].astype(np.float64) * short_vectors["fp32"]).sum(1)
            cells = []
            for dataset in datasets:
                if args.skip_quality:
                    cells.append("—")
                    continue
                value = variant_ndcg(path, fp32_dir, dataset, args.threads)
                base.setdefault(dataset, value)
                cells.append(f"{value:.4f} ({value - base[dataset]:+.4f})")
            print(
                f"| {name} | {rate[name]:.2f} | {rate[name] / rate['fp32']:.2f}× | "
                f"{cosine.min():.7f} | {cosine.mean():.7f} | {short_cosine.min():.7f} | "
                + " | ".join(cells)
                + " |",
                flush=True,
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--passages", type=int, default=128)
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--skip-quality", action="store_true")
    parser.add_argument("--variants", default=None, help="quantization recipes to compare")
    parser.add_argument("--dataset", type=Path, action="append", default=[])
    parser.add_argument("--calibration", type=int, default=200, help="texts (static variants)")
    parser.add_argument("--calibrate-on", type=Path, default=None, help="BEIR folder")
    parser.add_argument(
        "--int8-dir", type=Path, default=None, help="the int8 copy's folder (default: its own)"
    )
    args = parser.parse_args()
    if args.variants is not None:
        args.threads = args.threads or 1
        with tempfile.TemporaryDirectory() as folder:
            datasets = args.dataset or [unpack_cranfield(Path(folder))]
            compare_variants(args, default_model_dir(Path.home()), datasets)
        return
    args.threads = args.threads or available_cores()

    fp32_dir = default_model_dir(Path.home())
    int8_dir = args.int8_dir or quantized_model_dir(fp32_dir)
    install_model(int8_dir, quantize="int8")
    with tempfile.TemporaryDirectory() as folder:
        dataset = unpack_cranfield(Path(folder))
        texts = long_passages(dataset / "corpus.jsonl", args.passages)
        models = {
            "fp32": MiniLMEmbedding(fp32_dir, intra_op_threads=args.threads),
            "int8": MiniLMEmbedding(int8_dir, intra_op_threads=args.threads, model=INT8_MODEL),
        }
        for model in models.values():
            model.embed(texts[:8])  # session creation and first-call allocations
        seconds: dict[str, list[float]] = {name: [] for name in models}
        for _ in range(args.runs):
            for name, model in models.items():
                started = time.perf_counter()
                model.embed(texts)
                seconds[name].append(time.perf_counter() - started)
        rate = {name: len(texts) / statistics.median(times) for name, times in seconds.items()}
        print(f"threads {args.threads}, {len(texts)} passages of 256 tokens, {args.runs} runs")
        print("| model | texts/s (median) | vs FP32 | NDCG@10 Cranfield | Δ vs FP32 | index s |")
        print("| --- | ---: | ---: | ---: | ---: | ---: |")
        quality = {}
        for name, directory in (("fp32", fp32_dir), ("int8", int8_dir)):
            quality[name] = (
                (float("nan"), float("nan"))
                if args.skip_quality
                else ndcg(directory, MODEL_OF[name], dataset, args.threads)
            )
        for name in models:
            value, index_s = quality[name]
            print(
                f"| {name} | {rate[name]:.1f} | {rate[name] / rate['fp32']:.2f}× | {value:.4f} | "
                f"{value - quality['fp32'][0]:+.4f} | {index_s:.0f} |"
            )


if __name__ == "__main__":
    main()
