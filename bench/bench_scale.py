"""The growth curve: indexing time, query latency, peak RSS and warm re-runs as the corpus grows.

Corpora of ``--sizes`` documents are sampled (seeded) from Cranfield sentences (the
in-repo copy under tests/data) into documents of realistic length: word counts drawn
from a log-normal with a median of 110 words (~150 word pieces). ``--queries`` queries
are 6–10 consecutive words of a random document, which is their one relevant answer.

Every (size, retriever) is measured in a fresh child process, cold (empty embedding
cache) and then warm (the cache the cold run filled), so peak RSS (``ru_maxrss``)
belongs to that measurement alone. Retrievers: bm25, dense (FP32), dense-int8 (the
`model install --quantize int8` copy), hybrid (RRF of dense FP32 and bm25).

``--sharded N`` also runs the command-line matrix at the smallest size with the int8
model: N `embed --shard` jobs, `cache merge`, N `run --shard` jobs, `merge`, run one
after another; the matrix's wall time is the slowest embed shard + the cache merge +
the slowest evaluate shard + the merge. ``--embed-shard I/N`` times only that one
embed shard at each size (the shards are equal slices by hash).

    .venv/bin/python bench/bench_scale.py --sizes 10000 --json /tmp/scale.json
    .venv/bin/python bench/bench_scale.py --plot docs/img/scale.png --from-json /tmp/scale.json
"""

from __future__ import annotations

import argparse
import json
import math
import random
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

RETRIEVERS = ("bm25", "dense", "dense-int8", "hybrid")
MEDIAN_WORDS = 110
CONSOLE_SCRIPT = Path(sys.executable).parent / "retrieval-eval"


def _sentences(cranfield: Path) -> list[str]:
    sentences = []
    with (cranfield / "corpus.jsonl").open(encoding="utf-8") as lines:
        for line in lines:
            text = json.loads(line)["text"]
            sentences += [s.strip() for s in re.split(r"(?<=\.)\s+", text) if len(s.split()) > 3]
    return sentences


def build_corpus(cranfield: Path, size: int, queries: int, seed: int) -> dict[str, Any]:
    """Documents and queries, the same for every retriever and every run with this seed."""
    rng = random.Random(seed)
    sentences = _sentences(cranfield)
    documents = []
    for number in range(size):
        target = max(20, int(rng.lognormvariate(math.log(MEDIAN_WORDS), 0.5)))
        words: list[str] = []
        while len(words) < target:
            words += rng.choice(sentences).split()
        documents.append({"id": f"d{number}", "title": "", "text": " ".join(words[:target])})
    chosen = []
    for number in range(queries):
        document = rng.choice(documents)
        words = document["text"].split()
        length = rng.randint(6, 10)
        start = rng.randint(0, max(0, len(words) - length))
        chosen.append((f"q{number}", " ".join(words[start : start + length]), document["id"]))
    return {"documents": documents, "queries": chosen}


def _child(args: dict[str, Any]) -> dict[str, Any]:
    """One measurement, run in a fresh interpreter (see main's --child)."""
    from retrieval_eval.index.model_catalog import DEFAULT_MODEL, INT8_MODEL
    from retrieval_eval.index.model_install import default_model_dir
    from retrieval_eval.index.model_quantize import quantized_model_dir
    from retrieval_eval.load.documents import Corpus, Document
    from retrieval_eval.retrieval.config import RetrieversConfig
    from retrieval_eval.retrieval.defaults import resolve_defaults
    from retrieval_eval.retrieval.registry import (
        build_retriever,
        close_retriever,
    )
    from retrieval_eval.retrieval.search import RetrieverPool  # noqa: F401 (import cost, as a run)
    from retrieval_eval.retrieval.timed import QuerySpec, run_queries, time_index
    from retrieval_eval.score.query_scores import score_queries

    data = json.loads(Path(args["corpus"]).read_text(encoding="utf-8"))
    corpus = Corpus(
        documents=tuple(
            Document(id=d["id"], title=d["title"], text=d["text"]) for d in data["documents"]
        ),
        location="bench",
    )
    config = resolve_defaults(RetrieversConfig(), home=Path.home(), cores=args["threads"])
    name = args["retriever"]
    model_dir = default_model_dir(Path.home())
    model = DEFAULT_MODEL  # named, not "auto": each row measures the model it names
    if name == "dense-int8":
        model_dir, model = quantized_model_dir(model_dir), INT8_MODEL
    dense = config.dense.model_copy(
        update={
            "model": model,
            "model_dir": model_dir,
            "cache_dir": Path(args["cache"]),
            "threads": args["threads"],
        }
    )
    config = config.model_copy(update={"dense": dense})
    retriever = build_retriever("dense" if name == "dense-int8" else name, config)
    index_s = time_index(retriever, corpus)
    queries = [QuerySpec(qid, text) for qid, text, _ in data["queries"]]
    timed = run_queries(retriever, queries, 10)
    close_retriever(retriever)
    latencies = sorted(t.latency_s * 1000 for t in timed)
    qrels = {qid: {doc: 1} for qid, _, doc in data["queries"]}
    ranking = {t.query_id: [hit.doc_id for hit in t.result.hits] for t in timed}
    mrr = score_queries(qrels, ranking, ["mrr@10"])["mrr@10"]
    return {
        "index_s": index_s,
        "query_p50_ms": latencies[len(latencies) // 2],
        "query_p95_ms": latencies[math.ceil(0.95 * len(latencies)) - 1],
        "query_total_s": sum(latencies) / 1000,
        "mrr@10": statistics.fmean(mrr.get(q, 0.0) for q in qrels),
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def measure(corpus: Path, retriever: str, cache: Path, threads: int) -> dict[str, Any]:
    arguments = {
        "corpus": str(corpus),
        "retriever": retriever,
        "cache": str(cache),
        "threads": threads,
    }
    completed = subprocess.run(
        [sys.executable, __file__, "--child", json.dumps(arguments)],
        capture_output=True,
        text=True,
        check=True,
    )
    result: dict[str, Any] = json.loads(completed.stdout.splitlines()[-1])
    return result


def _timed_cli(*args: str, cwd: Path) -> float:
    started = time.perf_counter()
    completed = subprocess.run(
        [str(CONSOLE_SCRIPT), *args], cwd=cwd, capture_output=True, text=True, check=False
    )
    if completed.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(args)} failed:\n{completed.stderr}")
    return time.perf_counter() - started


def sharded_project(data: dict[str, Any], workdir: Path) -> Path:
    """The corpus, its queries as a golden dataset and a config for the int8 model."""
    from retrieval_eval.index.model_catalog import INT8_MODEL

    project = workdir / "project"
    (project / "datasets").mkdir(parents=True)
    with (project / "corpus.jsonl").open("w", encoding="utf-8") as out:
        for document in data["documents"]:
            out.write(json.dumps(document) + "\n")
    with (project / "datasets" / "semantic.jsonl").open("w", encoding="utf-8") as out:
        for qid, text, doc in data["queries"]:
            record = {
                "query_id": qid,
                "query": text,
                "retrieval_type": "semantic",
                "expected_top_k_ids": [doc],
                "ground_truth_source": "synthetic",
            }
            out.write(json.dumps(record) + "\n")
    (project / "retrieval-eval.toml").write_text(
        'corpus = "corpus.jsonl"\nmin_human = 0\n[dataset_retrievers]\n"semantic.jsonl" = "dense"\n'
        '[thresholds]\n"mrr@10" = false\n"ndcg@10" = false\n"p@5" = false\n'
        f'"latency_p95_ms" = false\n[retrievers.dense]\nmodel = "{INT8_MODEL}"\n',
        encoding="utf-8",
    )
    return project


def sharded(data: dict[str, Any], shards: int, workdir: Path) -> dict[str, Any]:
    """The command-line matrix with the int8 model, jobs one after another."""
    from retrieval_eval.index.model_catalog import INT8_MODEL

    project = sharded_project(data, workdir)
    embed = [
        _timed_cli("embed", "--shard", f"{i}/{shards}", "--cache-dir", f"c{i}", cwd=project)
        for i in range(1, shards + 1)
    ]
    merge_cache = _timed_cli(
        "cache", "merge", "--model", INT8_MODEL, "--into", "merged",
        *[f"c{i}" for i in range(1, shards + 1)], cwd=project,
    )  # fmt: skip
    evaluate = [
        _timed_cli(
            "run",
            "--shard",
            f"{i}/{shards}",
            "--cache-dir",
            "merged",
            "--report-dir",
            f"p{i}",
            cwd=project,
        )
        for i in range(1, shards + 1)
    ]
    merge = _timed_cli(
        "merge", "--quiet", "--cache-dir", "merged", "--report-dir", "out",
        *[f"p{i}" for i in range(1, shards + 1)], cwd=project,
    )  # fmt: skip
    warm = _timed_cli("run", "--quiet", "--cache-dir", "merged", "--report-dir", "w", cwd=project)
    return {
        "shards": shards,
        "embed_s": embed,
        "cache_merge_s": merge_cache,
        "evaluate_s": evaluate,
        "merge_s": merge,
        "matrix_wall_s": max(embed) + merge_cache + max(evaluate) + merge,
        "warm_single_job_s": warm,
    }


def plot(results: dict[str, Any], target: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(1, 2, figsize=(10, 4))
    for retriever in RETRIEVERS:
        rows = sorted(
            (int(size), row[retriever])
            for size, row in results["sizes"].items()
            if retriever in row
        )
        # Measured points make the time line; a run known to be disturbed is drawn hollow
        # beside it, an extrapolation as a cross in the line's colour.
        points = [(size, r) for size, r in rows if "cold" in r and not r.get("outlier")]
        if not points:
            continue
        sizes = [size for size, _ in points]
        (line,) = axes[0].plot(
            sizes, [r["cold"]["index_s"] for _, r in points], "o-", label=retriever
        )
        measured = [(size, r) for size, r in rows if "cold" in r]  # a disturbed run's memory holds
        axes[1].plot(
            [size for size, _ in measured],
            [r["cold"]["peak_rss_mb"] for _, r in measured],
            "o-",
            color=line.get_color(),
            label=retriever,
        )
        for size, row in rows:
            if "extrapolated_index_s" in row:
                axes[0].plot([size], [row["extrapolated_index_s"]], "x", color=line.get_color())
            if row.get("outlier"):
                axes[0].plot(
                    [size], [row["cold"]["index_s"]], "o", mfc="none", color=line.get_color()
                )
    for axis, label in zip(axes, ("cold indexing (s)", "peak RSS (MB)"), strict=True):
        axis.set_xscale("log")
        axis.set_yscale("log")
        axis.set_xlabel("documents")
        axis.set_ylabel(label)
        axis.grid(True, which="both", alpha=0.3)
    axes[0].legend()
    figure.suptitle("retrieval-eval growth (measured; x: extrapolated, hollow: disturbed run)")
    figure.tight_layout()
    figure.savefig(target, dpi=100)


def main() -> None:
    if len(sys.argv) == 3 and sys.argv[1] == "--child":
        print(json.dumps(_child(json.loads(sys.argv[2]))))
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000")
    parser.add_argument("--queries", type=int, default=1000)
    parser.add_argument("--retrievers", default=",".join(RETRIEVERS))
    parser.add_argument("--sharded", type=int, default=0, help="N for the matrix run (0: none)")
    parser.add_argument(
        "--embed-shard",
        metavar="I/N",
        help="instead of the retrievers, time only `embed --shard I/N` (int8) at each size",
    )
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", type=Path, help="write (and extend) the results here")
    parser.add_argument("--from-json", type=Path, help="only plot these results")
    parser.add_argument("--plot", type=Path)
    args = parser.parse_args()

    if args.from_json is not None:
        results = json.loads(args.from_json.read_text(encoding="utf-8"))
    else:
        from tests.data.cranfield import unpack_cranfield

        from retrieval_eval.index.model_install import default_model_dir, install_model
        from retrieval_eval.index.model_quantize import quantized_model_dir

        install_model(quantized_model_dir(default_model_dir(Path.home())), quantize="int8")
        results = (
            json.loads(args.json.read_text(encoding="utf-8"))
            if args.json is not None and args.json.is_file()
            else {"sizes": {}}
        )
        with tempfile.TemporaryDirectory(prefix="bench-scale-") as folder:
            work = Path(folder)
            cranfield = unpack_cranfield(work / "cranfield")
            for size in (int(s) for s in args.sizes.split(",")):
                data = build_corpus(cranfield, size, args.queries, args.seed)
                corpus = work / f"corpus-{size}.json"
                corpus.write_text(json.dumps(data), encoding="utf-8")
                row = results["sizes"].setdefault(str(size), {})
                if args.embed_shard:
                    project = sharded_project(data, work / f"shard-{size}")
                    seconds = _timed_cli(
                        "embed", "--shard", args.embed_shard, "--cache-dir", "c", cwd=project
                    )
                    row["embed_shard"] = {"shard": args.embed_shard, "seconds": seconds}
                    print(size, "embed shard", json.dumps(row["embed_shard"]), flush=True)
                    if args.json is not None:
                        args.json.write_text(json.dumps(results, indent=1), encoding="utf-8")
                    continue
                for retriever in args.retrievers.split(","):
                    cache = work / f"cache-{size}-{retriever}"
                    if retriever == "hybrid":  # fuses dense FP32: its cache is dense's
                        cache = work / f"cache-{size}-dense"
                    cold = measure(corpus, retriever, cache, args.threads)
                    warm = measure(corpus, retriever, cache, args.threads)
                    row[retriever] = {"cold": cold, "warm": warm}
                    print(size, retriever, json.dumps(row[retriever]), flush=True)
                    if args.json is not None:
                        args.json.write_text(json.dumps(results, indent=1), encoding="utf-8")
                if args.sharded:
                    row["sharded"] = sharded(data, args.sharded, work / f"sharded-{size}")
                    print(size, "sharded", json.dumps(row["sharded"]), flush=True)
                    if args.json is not None:
                        args.json.write_text(json.dumps(results, indent=1), encoding="utf-8")
    if args.plot is not None:
        plot(results, args.plot)


if __name__ == "__main__":
    main()
