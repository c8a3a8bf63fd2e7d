"""A retriever on a BEIR folder, scored (`retrieval-eval beir`).

For comparing our retrievers with published BEIR numbers and with each other
on real judgments (docs/benchmarks.md uses it on Cranfield). The TREC run it
writes can be re-scored with ``retrieval-eval trec`` or trec_eval itself.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from retrieval_eval.load.beir import load_beir
from retrieval_eval.prepare import prepare
from retrieval_eval.progress import Pace, stderr_log, step
from retrieval_eval.retrieval.base import CountsEmbeddings, ReportsMissingQueries, Retriever
from retrieval_eval.retrieval.builtin.hybrid import HybridRetriever
from retrieval_eval.retrieval.config import RetrieversConfig
from retrieval_eval.retrieval.defaults import (
    choose_dense_model,
    resolve_defaults,
    with_dense_model,
)
from retrieval_eval.retrieval.registry import RETRIEVER_NAMES, build_retriever, close_retriever
from retrieval_eval.retrieval.timed import (
    QuerySpec,
    TimedResult,
    index_with_progress,
    run_queries,
)
from retrieval_eval.score.latency import latency_summary
from retrieval_eval.score.query_scores import score_queries
from retrieval_eval.settings import validated_overrides
from retrieval_eval.trust.secrets import protect_process
from retrieval_eval.vocabulary import DEFAULT_CACHE_DIR

BUILT_IN = ("dense", "bm25", "hybrid", "like")
# `custom` and the services need their [retrievers.<name>] table, given with --config.
CONFIGURED = tuple(name for name in RETRIEVER_NAMES if name not in BUILT_IN)
MEASURES = ("ndcg@10", "mrr@10", "p@5", "recall@100", "map")


@dataclass(frozen=True)
class BeirScores:
    """The numbers (``summary``, as ``--json`` writes them) and every query's ranking."""

    summary: dict[str, object]
    timed: list[TimedResult]

    def trec_run(self) -> str:
        return trec_run(self.timed, run_name=f"retrieval-eval-{self.summary['retriever']}")


def evaluate_beir(
    ready: PreparedRetrievers,
    directory: Path,
    retriever_name: str,
    *,
    split: str,
    k: int,
    interactive: bool,
    anthropic_api_key: str | None,
) -> BeirScores:
    """Index the folder's corpus with the retriever, search its queries, score them."""
    data = load_beir(directory, split)
    for note in data.notes:
        stderr_log(f"note: {note}")
    # The folder's size chooses "auto" (no baseline here); `--json`'s config names it.
    choice = choose_dense_model(ready.retrievers, documents=len(data.corpus.documents))
    retriever = build_retriever(
        retriever_name,
        with_dense_model(ready.retrievers, choice.model),
        anthropic_api_key=anthropic_api_key,
        rerank_cache_dir=ready.cache_dir / "rerank",
    )
    try:
        setup_s = index_with_progress(
            retriever, data.corpus, interactive=interactive, log=stderr_log, pace=ready.pace
        )
        embedded = _index_embeddings(retriever)
        queries = [QuerySpec(query_id, text) for query_id, text in data.queries.items()]
        with step(
            f"searching with {retriever_name}",
            len(queries),
            interactive=interactive,
            log=stderr_log,
            pace=ready.pace,
        ) as tracker:
            timed = run_queries(retriever, queries, k, on_result=lambda _: tracker.advance(1))
        described = dict(retriever.describe())
        missing = (
            retriever.queries_missing if isinstance(retriever, ReportsMissingQueries) else None
        )
    finally:
        close_retriever(retriever)

    rankings = {t.query_id: [hit.doc_id for hit in t.result.hits] for t in timed}
    per_query = score_queries(data.qrels, rankings, list(MEASURES))
    latency = latency_summary([t.latency_s for t in timed])
    summary: dict[str, object] = {
        "dataset": str(directory),
        "split": split,
        "retriever": retriever_name,
        "k": k,
        "num_documents": len(data.corpus.documents),
        "num_queries": len(timed),
        **{measure: mean(per_query[measure].values()) for measure in MEASURES},
        "latency_p50_ms": latency.p50_ms,
        "latency_p95_ms": latency.p95_ms,
        **_rerank_latency(timed),
        "cost_per_query_usd": mean(t.result.cost_usd for t in timed),
        "setup_s": setup_s,
        "config": described,
    }
    if missing is not None:
        summary["queries_missing"] = len(missing)
    if embedded is not None:
        summary["embedded_texts"], summary["cached_embeddings"] = embedded
    return BeirScores(summary, timed)


@dataclass(frozen=True)
class PreparedRetrievers:
    """The [retrievers] tables, and the cache folder (``embeddings/`` and ``rerank/``
    inside, as for `run`)."""

    retrievers: RetrieversConfig
    cache_dir: Path
    pace: Pace = field(default_factory=Pace)


@contextmanager
def prepared_retrievers(
    config_file: Path | None,
    *,
    overrides: Mapping[str, Any],
    typed_outputs: tuple[Path, ...] = (),
) -> Iterator[PreparedRetrievers]:
    """The [retrievers] tables: the file's, through the one preparation every command uses
    (``secret_env`` withheld, then secrets resolved), or the defaults; ``overrides`` (the
    command's settings flags, nested as the file nests them) over either. The cache is
    `run`'s: ``--cache-dir``, else the file's ``cache_dir``, else ``.retrieval-eval-cache``,
    so a second run on the same folder embeds nothing. The model flag wins over the file."""
    model_dir = overrides.get("model_dir")
    cache_dir = overrides.get("cache_dir")
    dense_flags = {"model_dir": Path(model_dir)} if model_dir is not None else {}
    if config_file is None:
        # The runner's credentials are never a child's (no settings name more secrets).
        protect_process()
        root = (Path(cache_dir) if cache_dir is not None else Path(DEFAULT_CACHE_DIR)).absolute()
        # The flags' other settings over the defaults (the two paths are taken above).
        flagged = validated_overrides(
            {k: v for k, v in overrides.items() if k not in ("model_dir", "cache_dir")}
        )
        config = flagged.retrievers
        config = config.model_copy(update={"dense": config.dense.model_copy(update=dense_flags)})
        yield PreparedRetrievers(
            resolve_defaults(config, home=Path.home(), cores=_available_cores(), cache_dir=root),
            root,
            flagged.progress.pace(),
        )
        return
    # A BEIR folder is not the repository's corpus, and every file here was typed by the user
    # (the folder, the --config file and what it names): secrets are withheld, no roots apply.
    # Of the paths the file names, beir writes only the cache: that alone must stay inside.

    ready = prepare(
        workdir=Path.cwd(),
        config_file=config_file,
        overrides={k: v for k, v in overrides.items() if k != "model_dir"},
        typed_outputs=typed_outputs,
        written=("cache_dir",),
    )
    config = ready.settings.retrievers
    if dense_flags:
        config = config.model_copy(update={"dense": config.dense.model_copy(update=dense_flags)})
    yield PreparedRetrievers(config, ready.settings.cache_dir, ready.settings.progress.pace())


def _index_embeddings(retriever: Retriever) -> tuple[int, int] | None:
    """(texts the model embedded, texts the cache held) while indexing; None for a retriever
    that embeds nothing here. A second run on the same folder embeds 0."""
    embedder = retriever
    if isinstance(retriever, HybridRetriever):
        embedder = retriever.sides.get("dense", retriever)
    counters = embedder.embedding if isinstance(embedder, CountsEmbeddings) else None
    if counters is None:
        return None
    return int(counters.texts_embedded), int(counters.cache_hits)


def _rerank_latency(timed: list[TimedResult]) -> dict[str, float | None]:
    """The rerank stage's own latency, when the retriever has one (inside latency_*)."""
    seconds = [t.result.rerank_s for t in timed if t.result.rerank_s is not None]
    if not seconds:
        return {}
    summary = latency_summary(seconds)
    return {"rerank_p50_ms": summary.p50_ms, "rerank_p95_ms": summary.p95_ms}


def trec_run(timed: list[TimedResult], *, run_name: str) -> str:
    """``qid Q0 docid rank score run`` lines, ranks from 1 in our order.

    trec_eval ignores the rank column and sorts by score, breaking ties by document id
    *descending*, while our retrievers break them by document id ascending. So each
    written score is the retriever's, exactly (``repr`` round-trips through C's
    ``strtod``), lowered to just below the previous line's where it would tie with it
    or exceed it: scores strictly decrease with rank, and trec_eval ranks the documents
    exactly as we did, so ``retrieval-eval trec`` and trec_eval reproduce our numbers.
    """
    lines: list[str] = []
    for t in timed:
        previous = math.inf
        for rank, hit in enumerate(t.result.hits, start=1):
            score = hit.score if math.isfinite(hit.score) else previous
            if score >= previous:
                score = math.nextafter(previous, -math.inf)
            previous = score
            lines.append(f"{t.query_id} Q0 {hit.doc_id} {rank} {score!r} {run_name}\n")
    return "".join(lines)


def _available_cores() -> int:
    # Affinity, not cpu_count: a container limited to 2 CPUs should use 2 threads.
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def mean(values: Iterable[float]) -> float:
    numbers = list(values)
    return float(sum(numbers) / len(numbers)) if numbers else 0.0


def _millis(value: object) -> str:
    return f"{value:.2f} ms" if isinstance(value, float) else "n/a (no queries)"


def table(summary: Mapping[str, object]) -> str:
    """The numbers as the command prints them, one per line."""
    rows = [
        ("retriever", str(summary["retriever"])),
        ("queries", f"{summary['num_queries']} (documents: {summary['num_documents']})"),
        *((measure, f"{summary[measure]:.4f}") for measure in MEASURES),
        ("latency p50", _millis(summary["latency_p50_ms"])),
        ("latency p95", _millis(summary["latency_p95_ms"])),
        *(
            (label, _millis(summary[key]))
            for label, key in (("rerank p50", "rerank_p50_ms"), ("rerank p95", "rerank_p95_ms"))
            if key in summary
        ),
        ("cost/query", f"${summary['cost_per_query_usd']:.6f}"),
        ("setup", f"{summary['setup_s']:.2f} s"),
        *(
            [("embedded", f"{summary['embedded_texts']} texts ({cached} from the cache)")]
            if (cached := summary.get("cached_embeddings")) is not None
            else []
        ),
    ]
    return "\n".join(f"{name:<12} {value}" for name, value in rows)
