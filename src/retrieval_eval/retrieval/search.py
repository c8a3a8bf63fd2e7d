"""Index once, search every fixture: the slow middle of a run.

Retrievers are pooled by name for the whole run, so the corpus is indexed once
per (corpus, retriever configuration): when one dataset uses ``dense`` and
another ``hybrid``, hybrid fuses the very dense and bm25 indexes already built
instead of embedding the corpus again.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

from retrieval_eval.errors import RetrievalEvalError
from retrieval_eval.load.documents import Corpus
from retrieval_eval.load.fixtures import LocatedFixture
from retrieval_eval.progress import Log, Pace, step
from retrieval_eval.retrieval.base import (
    AnnFidelity,
    CountsEmbeddings,
    HasReranker,
    MeasuresAnnFidelity,
    ReportsCollapse,
    ReportsMissingQueries,
    ReportsWarnings,
    Retriever,
)
from retrieval_eval.retrieval.config import RetrieversConfig
from retrieval_eval.retrieval.registry import build_hybrid, build_retriever, close_retriever
from retrieval_eval.retrieval.timed import (
    QuerySpec,
    TimedResult,
    index_with_progress,
    run_queries,
)

EMBEDDING_RETRIEVERS = frozenset({"dense", "hybrid"})


class RetrieverPool:
    def __init__(
        self,
        retrievers: RetrieversConfig,
        corpus: Corpus,
        *,
        interactive: bool,
        log: Log,
        cache_dir: Path,
        anthropic_api_key: str | None = None,
        pace: Pace | None = None,
    ):
        self.pace = pace
        self.retrievers = retrievers
        self.cache_dir = cache_dir
        self.anthropic_api_key = anthropic_api_key
        self.corpus = corpus
        self.interactive = interactive
        self.log = log
        self.corpus_fingerprint = corpus.fingerprint()
        self._built: dict[tuple[str, str], tuple[Retriever, float]] = {}

    def __enter__(self) -> RetrieverPool:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        for retriever, _ in self._built.values():
            if isinstance(retriever, HasReranker):  # its sides are pooled: close its own part
                close_retriever(retriever.reranker)
            else:
                close_retriever(retriever)

    def get(self, name: str, config: RetrieversConfig | None = None) -> tuple[Retriever, float]:
        """The indexed retriever and the seconds its indexing took (0 when already built).

        ``config``: other settings than the run's (a challenger's). A retriever is built
        once per name and its own settings, so a challenger that changes only the fusion
        fuses the dense and bm25 indexes the gated retriever already built."""
        config = self.retrievers if config is None else config
        key = (name, own_settings(name, config))
        if key in self._built:
            return self._built[key][0], 0.0
        if name == "hybrid":
            dense, dense_s = self.get("dense", config)
            bm25, bm25_s = self.get("bm25", config)
            retriever = build_hybrid(
                config,
                {"dense": dense, "bm25": bm25},
                anthropic_api_key=self.anthropic_api_key,
                rerank_cache_dir=self.cache_dir / "rerank",
            )
            seconds = dense_s + bm25_s
        else:
            retriever = build_retriever(name, config)
            try:
                seconds = index_with_progress(
                    retriever,
                    self.corpus,
                    interactive=self.interactive,
                    log=self.log,
                    pace=self.pace,
                    name=name,
                )
            except BaseException:
                close_retriever(retriever)  # a child process it started ends here
                raise
            for warning in retriever.warnings if isinstance(retriever, ReportsWarnings) else ():
                self.log(f"warning: {warning}")
        self._built[key] = (retriever, seconds)
        return retriever, seconds

    @property
    def model_sha256(self) -> str | None:
        dense = self._built.get(("dense", own_settings("dense", self.retrievers)))
        if dense is None:
            return None
        description = dense[0].describe()
        sha = description.get("model_sha256")
        return sha if isinstance(sha, str) else None

    def embedding_counts(self) -> tuple[int, int] | None:
        """(texts embedded, cache hits) so far, when a dense index exists."""
        built = self._built.get(("dense", own_settings("dense", self.retrievers)))
        dense = built[0] if built is not None else None
        embedding = dense.embedding if isinstance(dense, CountsEmbeddings) else None
        if embedding is None:
            return None
        return int(embedding.texts_embedded), int(embedding.cache_hits)


def own_settings(name: str, config: RetrieversConfig) -> str:
    """The settings that build the retriever called ``name``, as text: what tells two
    configurations' retrievers of one name apart (hybrid's include both its sides')."""
    tables = {
        "hybrid": ("hybrid", "dense", "bm25"),
        "run-file": ("run_file",),
        # the engines embed with the dense table's model and chunking
        "qdrant": ("qdrant", "dense"),
        "lancedb": ("lancedb", "dense"),
        "milvus": ("milvus", "dense"),
    }.get(name, (name,))
    chosen = {table: getattr(config, table, None) for table in tables}
    return json.dumps(
        {
            table: None if value is None else value.model_dump(mode="json")
            for table, value in chosen.items()
        },
        sort_keys=True,
    )


@dataclass(frozen=True)
class SearchedDataset:
    """One dataset's timed results and what produced them."""

    retriever: str
    retriever_config: Mapping[str, object]
    setup_s: float
    timed: tuple[TimedResult, ...]
    # (texts embedded, cache hits) by this dataset's search; None when it embedded nothing.
    embedding_counts: tuple[int, int] | None
    # Queries a run file did not answer (empty results); None for other retrievers.
    queries_missing: int | None = None
    # With `repeats = N`, the results of repeats 2..N in the order of ``timed`` (the first
    # repeat is ``timed``, which latency and the report's ranked ids come from).
    repeats: tuple[tuple[TimedResult, ...], ...] = ()
    # The approximate index's recall@k of exact search (informational, never gated); None
    # when the retriever has no approximate index to measure or measuring is off.
    ann_fidelity: AnnFidelity | None = None

    def passages(self) -> dict[str, tuple[tuple[str, str], ...]]:
        """Each query's ranked (doc id, chunk text): what the LLM judge reads."""
        return {
            t.query_id: tuple((hit.doc_id, hit.text) for hit in t.result.hits) for t in self.timed
        }


def search_dataset(
    path: Path,
    fixtures: Sequence[LocatedFixture],
    pool: RetrieverPool,
    *,
    name: str,
    k: int,
    interactive: bool,
    log: Log,
    repeats: int = 1,
    config: RetrieversConfig | None = None,
    label: str | None = None,
    pace: Pace | None = None,
) -> SearchedDataset:
    """Search every fixture of one dataset with the retriever called ``name``, ``repeats``
    times over (for a retriever that is not deterministic). ``config``: other settings
    than the run's (a challenger's, shown as ``label``), whose embeddings are not counted."""
    before = pool.embedding_counts() or (0, 0)
    retriever, setup_s = pool.get(name, config)
    queries = [
        QuerySpec(
            query_id=lf.fixture.query_id, text=lf.fixture.query, tags=lf.fixture.filter_tags()
        )
        for lf in fixtures
    ]
    collapsed_before = retriever.collapsed() if isinstance(retriever, ReportsCollapse) else None
    title = f"{path.name}: searching with {label or name}"
    if repeats > 1:
        title += f", {repeats} times"
    runs: list[list[TimedResult]] = []
    with step(
        title, len(queries) * repeats, interactive=interactive, log=log, pace=pace
    ) as advance:
        try:
            for _ in range(repeats):
                runs.append(run_queries(retriever, queries, k, on_result=lambda _: advance(1)))
        except RetrievalEvalError:
            raise
        except Exception as error:
            raise RetrievalEvalError(
                f"retriever {label or name!r} failed: {error}", file=path
            ) from error
    timed = runs[0]
    _log_collapse(path, retriever, collapsed_before, log)
    _warn_about_unknown_ids(path, timed, pool.corpus, log)
    fidelity = _ann_fidelity(path, retriever, queries, k, log)
    after = pool.embedding_counts()
    missing = retriever.queries_missing if isinstance(retriever, ReportsMissingQueries) else None
    counts = None
    if after is not None and name in EMBEDDING_RETRIEVERS and config is None:
        counts = (after[0] - before[0], after[1] - before[1])
    return SearchedDataset(
        retriever=name,
        retriever_config=retriever.describe(),
        setup_s=setup_s,
        timed=tuple(timed),
        embedding_counts=counts,
        queries_missing=len(missing) if missing is not None else None,
        repeats=tuple(tuple(run) for run in runs[1:]),
        ann_fidelity=fidelity,
    )


def _ann_fidelity(
    path: Path, retriever: Retriever, queries: Sequence[QuerySpec], k: int, log: Log
) -> AnnFidelity | None:
    """Untimed, after the timed search. It only informs, so a failure (exact search over
    a big table running past timeout_s) is a warning, not the run's error."""
    if not isinstance(retriever, MeasuresAnnFidelity):
        return None
    try:
        return retriever.ann_fidelity([(q.text, q.tags) for q in queries], k)
    except RetrievalEvalError as error:
        log(f"warning: {path.name}: ANN fidelity not measured: {error.message}")
    except Exception as error:  # a client library's own error (a timeout, a refusal)
        log(f"warning: {path.name}: ANN fidelity not measured: {type(error).__name__}: {error}")
    return None


def _log_collapse(
    path: Path, retriever: Retriever, before: Mapping[int, int] | None, log: Log
) -> None:
    """How many results (chunks) stood behind each document this dataset's search
    returned, for a retriever that collapses them itself."""
    if before is None or not isinstance(retriever, ReportsCollapse):
        return
    now = retriever.collapsed()
    counts = {n: now.get(n, 0) - before.get(n, 0) for n in now}
    counts = {n: documents for n, documents in sorted(counts.items()) if documents > 0}
    if not counts:
        return
    results = sum(n * documents for n, documents in counts.items())
    shown = ", ".join(f"{documents} from {n}" for n, documents in counts.items())
    log(
        f"{path.name}: {results} results collapsed to {sum(counts.values())} documents "
        f"(documents from 1, 2, ... results: {shown})"
    )


def _warn_about_unknown_ids(
    path: Path, timed: Sequence[TimedResult], corpus: Corpus, log: Log
) -> None:
    """Hits naming no document in the corpus score as misses; say so, once per dataset
    (a retriever reading a stale index, or ids built differently, looks like a regression)."""
    known = corpus.ids()
    unknown = [hit.doc_id for t in timed for hit in t.result.hits if hit.doc_id not in known]
    if unknown:
        log(
            f"warning: {path.name}: {len(unknown)} hit{'s' if len(unknown) > 1 else ''} name "
            f"documents not in the corpus (e.g. {unknown[0]!r}); they count as misses"
        )
