"""Peak RSS of dense indexing on Cranfield, per token budget, each in a fresh child process.

The dense retriever streams: it embeds ``EMBED_BATCH`` chunks, adds them to the
collection and drops them, and each model call holds at most ``token_budget`` token
positions. ``ru_maxrss`` of a child that only imports, loads Cranfield (the in-repo
copy under tests/data) and indexes is the peak a run pays for the dense index.

    .venv/bin/python bench/bench_memory.py [--budgets 16384,2048] [--limit 0]
    .venv/bin/python bench/bench_memory.py --budgets 2048 --limit 300 --sessions default,legacy

``--sessions`` measures each budget with onnxruntime's default session options (what
MiniLMEmbedding uses) and with the arena, memory patterns and pre-packing off
(``legacy``, what it used before), children alternating.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))


def child(dataset: Path, budget: int, limit: int, session: str = "default") -> dict[str, float]:
    from functools import cached_property

    from retrieval_eval.index.embedding import MiniLMEmbedding
    from retrieval_eval.load.beir import load_beir

    if session == "legacy":
        sys.path.insert(0, str(REPO / "bench"))
        from bench_embedding import legacy_session

        def _legacy(self: MiniLMEmbedding) -> object:
            return legacy_session(self.model_dir, self.intra_op_threads)

        prop = cached_property(_legacy)
        prop.__set_name__(MiniLMEmbedding, "_session")
        MiniLMEmbedding._session = prop  # type: ignore[assignment,method-assign]
    from retrieval_eval.retrieval.config import RetrieversConfig
    from retrieval_eval.retrieval.defaults import resolve_defaults
    from retrieval_eval.retrieval.registry import build_retriever

    corpus = load_beir(dataset).corpus
    if limit:
        corpus = dataclasses.replace(corpus, documents=corpus.documents[:limit])
    config = resolve_defaults(RetrieversConfig(), home=Path.home(), cores=2)
    dense = config.dense.model_copy(update={"token_budget": budget, "cache_dir": None})
    retriever = build_retriever("dense", config.model_copy(update={"dense": dense}))
    started = time.perf_counter()
    retriever.index(corpus)
    return {
        "session": session,  # type: ignore[dict-item]
        "budget": budget,
        "documents": len(corpus.documents),
        "index_s": time.perf_counter() - started,
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def main() -> None:
    if len(sys.argv) == 6 and sys.argv[1] == "--child":
        print(json.dumps(child(Path(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5])))
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budgets", default="16384,2048")
    parser.add_argument("--limit", type=int, default=0, help="first N documents only (0: all)")
    parser.add_argument("--sessions", default="default", help="default, legacy or both")
    args = parser.parse_args()
    from tests.data.cranfield import unpack_cranfield

    with tempfile.TemporaryDirectory() as folder:
        dataset = unpack_cranfield(Path(folder))
        print("| session options | token budget | documents | index s | peak RSS MB |")
        print("| --- | ---: | ---: | ---: | ---: |")
        for budget in (int(b) for b in args.budgets.split(",")):
            for session in args.sessions.split(","):
                completed = subprocess.run(
                    [
                        sys.executable,
                        __file__,
                        "--child",
                        str(dataset),
                        str(budget),
                        str(args.limit),
                        session,
                    ],
                    capture_output=True,
                    text=True,
                    check=True,
                )
                row = json.loads(completed.stdout.splitlines()[-1])
                print(
                    f"| {session} | {budget:,} | {row['documents']:,} | {row['index_s']:.0f} | "
                    f"{row['peak_rss_mb']:,.0f} |",
                    flush=True,
                )


if __name__ == "__main__":
    main()
