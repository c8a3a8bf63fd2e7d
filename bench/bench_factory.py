"""A Python factory retriever in its own process versus the same object called directly.

Since the factory runs in a child process (so the pull request's code never shares a
process with the token), every ``index`` and ``search`` crosses a pipe as JSON. The
peer, measured in the same run, is what that isolation replaced: the very same
retriever object called in this process. Two retrievers show the overhead against a
cost: ``fixed`` returns the same ten hits at once (the pipe and JSON alone), ``overlap``
ranks every document by words shared with the query (a small real search).
Medians of ``--runs`` rounds, the two variants alternating. Prints a Markdown table;
the numbers go into docs/benchmarks.md.

A second table puts the one-query protocol against `search_many` (many queries per
request) in the same rounds: the same retriever with a ``search_many`` method of its
own (``fixed_many``, ``overlap_many``), each searched through the run's own query loop
(``timed.run_queries``, which sends batches to a retriever that declared it takes
them), per query = the loop's time over the queries.

    .venv/bin/python bench/bench_factory.py [--docs 2000] [--queries 500] [--runs 5]
"""

from __future__ import annotations

import argparse
import importlib
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from retrieval_eval.load.documents import Corpus, Document
from retrieval_eval.retrieval.config import CustomConfig
from retrieval_eval.retrieval.external.custom import build_custom
from retrieval_eval.retrieval.timed import QuerySpec, run_queries

MODULE = """
from retrieval_eval.retrieval.base import Hit, SearchResult

class Fixed:
    name = "fixed"
    def index(self, corpus):
        self.ids = [d.id for d in corpus.documents[:10]]
    def search(self, query, k, tags=()):
        return SearchResult(hits=tuple(Hit(i, 1.0 / (n + 1), "") for n, i in enumerate(self.ids)))
    def describe(self):
        return {}

class Overlap:
    name = "overlap"
    def index(self, corpus):
        self.docs = [(d.id, set(d.text.split())) for d in corpus.documents]
    def search(self, query, k, tags=()):
        words = set(query.split())
        scored = sorted(((len(words & w), i) for i, w in self.docs), reverse=True)[:k]
        return SearchResult(hits=tuple(Hit(i, float(s), "") for s, i in scored))
    def describe(self):
        return {}

class FixedMany(Fixed):
    def search_many(self, queries, k):
        return [self.search(query, k, tags) for query, tags in queries]

class OverlapMany(Overlap):
    def search_many(self, queries, k):
        return [self.search(query, k, tags) for query, tags in queries]

def fixed():
    return Fixed()

def overlap():
    return Overlap()

def fixed_many():
    return FixedMany()

def overlap_many():
    return OverlapMany()
"""


def _corpus(count: int) -> Corpus:
    words = [f"w{n}" for n in range(500)]
    documents = tuple(
        Document(
            id=f"doc/{n}",
            title="",
            text=" ".join(words[(n * 7 + j * 13) % 500] for j in range(40)),
        )
        for n in range(count)
    )
    return Corpus(documents=documents, location="bench")


def _queries(count: int) -> list[str]:
    return [" ".join(f"w{(q * 31 + j * 17) % 500}" for j in range(5)) for q in range(count)]


def _time_searches(retriever: object, queries: list[str]) -> float:
    search = retriever.search  # type: ignore[attr-defined]
    started = time.perf_counter()
    for query in queries:
        search(query, 10)
    return (time.perf_counter() - started) / len(queries)


def _round(kind: str, folder: Path, corpus: Corpus, queries: list[str]) -> dict[str, float]:
    hosted = build_custom(CustomConfig(python=f"bench_factory_module:{kind}", cwd=folder))
    started = time.perf_counter()
    hosted.index(corpus)
    hosted_index = time.perf_counter() - started
    hosted_search = _time_searches(hosted, queries)
    hosted.close()  # type: ignore[attr-defined]

    module = importlib.import_module("bench_factory_module")
    direct = getattr(module, kind)()
    started = time.perf_counter()
    direct.index(corpus)
    direct_index = time.perf_counter() - started
    direct_search = _time_searches(direct, queries)
    return {
        "hosted_search": hosted_search,
        "direct_search": direct_search,
        "hosted_index": hosted_index,
        "direct_index": direct_index,
    }


def _child_cpu(pid: int) -> float:
    """CPU seconds (user + system) the process ``pid`` has used so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _time_loop(kind: str, folder: Path, corpus: Corpus, queries: list[str]) -> tuple[float, float]:
    """(wall seconds, CPU seconds of both processes) per query through the run's query
    loop, the factory in its own process."""
    hosted = build_custom(CustomConfig(python=f"bench_factory_module:{kind}", cwd=folder))
    hosted.index(corpus)
    pid = hosted._process.pid  # type: ignore[attr-defined]
    specs = [QuerySpec(query_id=str(n), text=text) for n, text in enumerate(queries)]
    child, cpu, started = _child_cpu(pid), time.process_time(), time.perf_counter()
    run_queries(hosted, specs, 10)
    wall = time.perf_counter() - started
    cpu = time.process_time() - cpu + _child_cpu(pid) - child
    hosted.close()  # type: ignore[attr-defined]
    return wall / len(queries), cpu / len(queries)


def _batch_rows(folder: Path, corpus: Corpus, queries: list[str], runs: int) -> list[str]:
    rows = []
    for kind in ("fixed", "overlap"):
        one, many, direct = [], [], []
        for _ in range(runs):  # alternating, so a load change falls on both
            one.append(_time_loop(kind, folder, corpus, queries))
            many.append(_time_loop(f"{kind}_many", folder, corpus, queries))
            same = getattr(importlib.import_module("bench_factory_module"), kind)()
            same.index(corpus)
            cpu = time.process_time()
            _time_searches(same, queries)
            direct.append((time.process_time() - cpu) / len(queries))
        one_wall, many_wall = (statistics.median(w for w, _ in side) for side in (one, many))
        one_cpu, many_cpu = (statistics.median(c for _, c in side) for side in (one, many))
        direct_cpu = statistics.median(direct)
        rows.append(
            f"| {kind} | {one_cpu * 1e6:.0f} µs | {many_cpu * 1e6:.0f} µs | "
            f"**{one_cpu / many_cpu:.1f}×** | {direct_cpu * 1e6:.0f} µs | "
            f"{(one_cpu - direct_cpu) * 1e6:.0f} µs | {(many_cpu - direct_cpu) * 1e6:.0f} µs | "
            f"{one_wall * 1e6:.0f} µs | {many_wall * 1e6:.0f} µs |"
        )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=2000)
    parser.add_argument("--queries", type=int, default=500)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--batch-only", action="store_true", help="only the second table")
    args = parser.parse_args()
    corpus, queries = _corpus(args.docs), _queries(args.queries)
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        (folder / "bench_factory_module.py").write_text(MODULE, encoding="utf-8")
        sys.path.insert(0, str(folder))
        print(f"{args.docs} documents, {args.queries} queries, medians of {args.runs} rounds\n")
        if not args.batch_only:
            print(
                "| retriever | search, own process | search, called directly | ratio |"
                " index, own process | index, directly | ratio |"
            )
            print("|---|---:|---:|---:|---:|---:|---:|")
            for kind in ("fixed", "overlap"):
                rounds = [_round(kind, folder, corpus, queries) for _ in range(args.runs)]
                med = {key: statistics.median(r[key] for r in rounds) for key in rounds[0]}
                print(
                    f"| {kind} | {med['hosted_search'] * 1e6:.0f} µs | "
                    f"{med['direct_search'] * 1e6:.0f} µs | "
                    f"{med['hosted_search'] / med['direct_search']:.2f}× | "
                    f"{med['hosted_index'] * 1e3:.0f} ms | {med['direct_index'] * 1e3:.1f} ms | "
                    f"{med['hosted_index'] / med['direct_index']:.1f}× |"
                )
        print(
            "\n| retriever | CPU per query, one `search` each | CPU per query, `search_many` |"
            " one-query / batched | CPU per query, called directly | overhead, one-query |"
            " overhead, batched | wall per query, one-query | wall per query, batched |"
        )
        print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
        for row in _batch_rows(folder, corpus, queries, args.runs):
            print(row)


if __name__ == "__main__":
    main()
