"""`retrieval-eval beir DIR --retriever bm25` against the script a user would write instead.

The peer is the short script below, run as a fresh process as our command is: bm25s (its
own tokenizer with English stop words and PyStemmer's Snowball stemmer, as our defaults
stem and stop) indexes every document, retrieves the top 100 for every query, and
pytrec_eval scores the run (NDCG@10, MRR, P@5, recall@100, MAP). Our command does the same
work and more: our chunking and tokenizer, a warm-up query, one timed search per query,
latency percentiles, and its printed table. Each side is a fresh process, interleaved,
measured as CPU time (user + system of the child: the figure a loaded machine distorts
least) and wall time; medians of ``--repeat``. ``--other-src`` adds our command run from a
second tree's ``src`` (another commit's, from ``git archive``), interleaved with the others.

    .venv/bin/python bench/bench_beir_bm25.py BEIR_DIR --repeat 5
    .venv/bin/python bench/bench_beir_bm25.py BEIR_DIR --repeat 5 --other-src /tmp/before/src
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

PEER = """
import json, sys
import bm25s, pytrec_eval, Stemmer
folder = sys.argv[1]
docs = [json.loads(line) for line in open(f"{folder}/corpus.jsonl", encoding="utf-8")]
queries = [json.loads(line) for line in open(f"{folder}/queries.jsonl", encoding="utf-8")]
qrels = {}
for line in list(open(f"{folder}/qrels/test.tsv", encoding="utf-8"))[1:]:
    query_id, doc_id, grade = line.split()
    qrels.setdefault(query_id, {})[doc_id] = int(grade)
queries = [q for q in queries if q["_id"] in qrels]
stemmer = Stemmer.Stemmer("english")
texts = [f"{d.get('title', '')} {d['text']}" for d in docs]
model = bm25s.BM25(k1=1.5, b=0.6)
model.index(bm25s.tokenize(texts, stopwords="en", stemmer=stemmer, show_progress=False),
            show_progress=False)
tokens = bm25s.tokenize([q["text"] for q in queries], stopwords="en", stemmer=stemmer,
                        show_progress=False)
found, scores = model.retrieve(tokens, k=100, show_progress=False)
run = {q["_id"]: {docs[i]["_id"]: float(s) for i, s in zip(row, row_scores)}
       for q, row, row_scores in zip(queries, found, scores)}
measures = {"ndcg_cut_10", "recip_rank", "P_5", "recall_100", "map"}
results = pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(run)
for measure in sorted(measures | {"ndcg_cut_10"}):
    key = "ndcg_cut_10" if measure == "ndcg_cut_10" else measure
    print(key, sum(r[key] for r in results.values()) / len(results))
"""


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(args: list[str], env: Mapping[str, str]) -> tuple[float, float, str]:
    """(CPU seconds, wall seconds, stdout) of one child process."""
    cpu_before = _children_cpu()
    started = time.perf_counter()
    done = subprocess.run(args, cwd=REPO, capture_output=True, text=True, check=False, env=env)
    wall = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(args)} exited {done.returncode}:\n{done.stderr}")
    return _children_cpu() - cpu_before, wall, done.stdout


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("directory", type=Path, help="a BEIR folder (corpus.jsonl, ...)")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument(
        "--other-src", type=Path, help="another tree's src folder, run as a third side"
    )
    options = parser.parse_args()
    folder = str(options.directory.resolve())
    with tempfile.TemporaryDirectory(prefix="bench-beir-") as scratch:
        # Compiled bytecode, as an installed package or the Docker image has it.
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env["PYTHONPYCACHEPREFIX"] = str(Path(scratch) / "pycache")
        peer_file = Path(scratch) / "peer.py"
        peer_file.write_text(PEER, encoding="utf-8")
        ours = [
            str(Path(sys.executable).with_name("retrieval-eval")),
            "beir",
            folder,
            "--retriever",
            "bm25",
            "--no-progress",
            "--cache-dir",
            str(Path(scratch) / "cache"),
        ]
        peer = [sys.executable, str(peer_file), folder]
        sides = {"retrieval-eval beir --retriever bm25": (ours, env)}
        if options.other_src is not None:
            other = {
                **env,
                "PYTHONPATH": str(options.other_src.resolve()),
                "PYTHONPYCACHEPREFIX": str(Path(scratch) / "pycache-other"),
            }
            sides["the same, other tree"] = (ours, other)
        sides["bm25s + pytrec_eval script"] = (peer, env)
        for args, side_env in sides.values():  # fills the bytecode caches
            print(timed(args, side_env)[2].strip(), file=sys.stderr)
        measured: dict[str, list[tuple[float, float]]] = {name: [] for name in sides}
        load_start = os.getloadavg()[0]
        for _ in range(options.repeat):
            for name, (args, side_env) in sides.items():
                cpu, wall, _ = timed(args, side_env)
                measured[name].append((cpu, wall))
        load_end = os.getloadavg()[0]
    peer_cpu = statistics.median(cpu for cpu, _ in measured["bm25s + pytrec_eval script"])
    print(f"load average {load_start:.1f} at the start, {load_end:.1f} at the end")
    print("| side | CPU, median | CPU runs (s) | wall, median | peer CPU / CPU |")
    print("|---|--:|---|--:|--:|")
    for name, values in measured.items():
        cpus = [cpu for cpu, _ in values]
        cpu = statistics.median(cpus)
        runs = ", ".join(f"{value:.2f}" for value in cpus)
        wall = statistics.median(wall for _, wall in values)
        print(f"| {name} | {cpu:.2f} s | {runs} | {wall:.2f} s | {peer_cpu / cpu:.2f}× |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
