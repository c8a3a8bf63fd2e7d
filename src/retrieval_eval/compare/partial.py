"""Sharded evaluation: one shard's measurements (``partial.json``) and their exact merge.

A shard keeps every query's full result, not its own means: means, bootstrap
intervals and breakdowns are recomputed once over all queries, in the datasets'
own fixture order, so the merged report is the one an unsharded run writes
(timings apart). Merging refuses anything that would make that untrue: partials
of different datasets, corpus, configuration or model, a missing shard, or one
shard given twice.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from operator import attrgetter
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError
from pydantic_core import to_jsonable_python

from retrieval_eval.compare.challengers import Scores, Side
from retrieval_eval.errors import InputError
from retrieval_eval.fileio import atomic_write_text
from retrieval_eval.results import (
    AnnFidelitySummary,
    CollapseSummary,
    DatasetReport,
    Latency,
    QueryResult,
)
from retrieval_eval.score.labels import label_coverage
from retrieval_eval.score.latency import cost_summary, latency_summary
from retrieval_eval.score.measurements import aggregates, breakdowns, fingerprint_of_records
from retrieval_eval.score.repeats import merge_spreads
from retrieval_eval.settings import RunSettings
from retrieval_eval.sharding import Shard
from retrieval_eval.vocabulary import GROUNDEDNESS

PARTIAL_FILE = "partial.json"
PARTIAL_SCHEMA_VERSION = 2

# Settings that change nothing a shard measures, so jobs of one matrix may differ in
# them and still merge: where the checkout and its inputs are (the datasets', corpus's and
# model's contents are fingerprinted on their own), where the outputs go, how long a run
# may take, how progress is shown, how often a slow call is waited for or retried, and the
# baseline-update policy (a push's step, never a measurement). Dotted: a key of a table.
_LOCAL_SETTINGS = frozenset(
    {
        "repository",
        "outside_roots",
        "datasets",
        "corpus",
        "baseline",
        "history",
        "report_dir",
        "cache_dir",
        "model_dir",
        "time_limit_s",
        "progress",
        "baseline_update",
        "judge.timeout_s",
        "judge.max_retries",
    }
)
# The same inside every ``retrievers`` table (the run's and each challenger's).
_LOCAL_RETRIEVER_SETTINGS = frozenset(
    {
        "dense.model_dir",
        "dense.cache_dir",
        "dense.persist_dir",
        "dense.threads",
        "dense.batch_size",
        "dense.token_budget",
        "hybrid.claude.cache_dir",
        "hybrid.claude.timeout_s",
        "hybrid.claude.max_retries",
    }
)


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class PartialChallenger(_Frozen):
    """One challenger on one shard's queries: what the merge compares, or why it has none."""

    name: str
    retriever: str
    warning: str | None = None
    config: dict[str, Any] = {}
    metrics: dict[str, dict[str, float]] = {}  # scored query id -> metric -> value
    latency_ms: dict[str, float] = {}
    cost_usd: dict[str, float] = {}

    @classmethod
    def of(cls, side: Side) -> PartialChallenger:
        if side.scores is None:
            return cls(name=side.name, retriever=side.retriever, warning=side.warning)
        scores = side.scores
        return cls(
            name=side.name,
            retriever=side.retriever,
            warning=side.warning,
            config=dict(scores.config),
            metrics={qid: dict(values) for qid, values in scores.metrics.items()},
            latency_ms=dict(scores.latency_ms),
            cost_usd=dict(scores.cost_usd),
        )


class PartialDataset(_Frozen):
    """One dataset's share: its queries' results plus what the merge needs of the rest.

    A shard validates only its own fixtures, so it cannot compute the dataset's
    fingerprint; it records its fixtures' shares of it (``fixture_records``), the merge
    computes it over all of them, and the shards are checked to have read the same
    files by ``files_sha256``."""

    report: DatasetReport  # measured over this shard's queries only
    query_order: tuple[str, ...]  # every query id of the dataset, in fixture order
    retrieval_types: dict[str, str]  # this shard's query id -> retrieval_type
    fixture_records: dict[str, str]  # this shard's query id -> its fixture_record
    files_sha256: str  # of the dataset file's bytes
    # (texts embedded, cache hits) while indexing for this dataset; the report's own counts
    # are then this shard's queries' alone.
    index_embedding_counts: tuple[int, int] = (0, 0)
    challengers: tuple[PartialChallenger, ...] = ()  # on this shard's queries


class Partial(_Frozen):
    schema_version: int = PARTIAL_SCHEMA_VERSION
    shard_index: int
    shard_count: int
    config_fingerprint: str
    corpus_fingerprint: str
    model_sha256: str | None
    datasets: tuple[PartialDataset, ...]


def config_fingerprint(settings: RunSettings) -> str:
    """sha256 of every setting that changes what is measured or how it is judged.

    A path is taken relative to the repository (a file outside it keeps its absolute
    path): two checkouts of one commit at different places, on different runners, make
    the same fingerprint."""
    root = settings.repository
    data = to_jsonable_python(_portable(settings.model_dump(), root))
    _drop(data, _LOCAL_SETTINGS)
    tables = [data["retrievers"], *(c["retrievers"] for c in data["challengers"].values())]
    for table in tables:
        _drop(table, _LOCAL_RETRIEVER_SETTINGS)
    return hashlib.sha256(json.dumps(data, sort_keys=True).encode("utf-8")).hexdigest()


def _portable(value: object, root: Path | None) -> object:
    """``value`` (a settings dump) with each path under ``root`` made relative to it."""
    if isinstance(value, Path):
        if root is not None and value.is_absolute() and value.is_relative_to(root):
            return value.relative_to(root).as_posix()
        return value.as_posix()
    if isinstance(value, dict):
        return {key: _portable(item, root) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_portable(item, root) for item in value]
    return value


def _drop(data: dict[str, Any], dotted: frozenset[str]) -> None:
    for name in dotted:
        *tables, key = name.split(".")
        table: Any = data
        for step in tables:
            table = table.get(step) if isinstance(table, dict) else None
        if isinstance(table, dict):
            table.pop(key, None)


def write_partial(partial: Partial, report_dir: Path) -> Path:
    path = report_dir / PARTIAL_FILE
    atomic_write_text(path, partial.model_dump_json(indent=1) + "\n")
    return path


def read_partial(shard_dir: Path) -> Partial:
    path = shard_dir / PARTIAL_FILE
    if not path.is_file():
        raise InputError(
            f"no {PARTIAL_FILE} here: give the --report-dir of a `retrieval-eval run --shard I/N`",
            file=shard_dir,
        )
    try:
        partial = Partial.model_validate_json(path.read_bytes())
    except ValidationError as error:
        raise InputError(
            f"not a partial result of this retrieval-eval version ({error.error_count()} "
            "problem(s)); re-run the shard with the same version as the merge",
            file=path,
        ) from None
    return partial


def check_complete(partials: Sequence[tuple[Path, Partial]], settings: RunSettings) -> None:
    """Every shard 1..N exactly once, all of the same inputs and of this configuration."""
    if not partials:
        raise InputError("no shard report folders given")
    first_path, first = partials[0]
    expected_config = config_fingerprint(settings)
    for path, partial in partials:
        where = path / PARTIAL_FILE
        if partial.config_fingerprint != expected_config:
            raise InputError(
                "made with a different configuration than this merge's (thresholds, measures, "
                "k, retrievers, seed...): run every shard and the merge with the same config",
                file=where,
            )
        if partial.shard_count != first.shard_count:
            raise InputError(
                f"is shard {partial.shard_index}/{partial.shard_count}, but "
                f"{first_path / PARTIAL_FILE} is of {first.shard_count} shards",
                file=where,
            )
        for what, mine, theirs in (
            ("corpus", partial.corpus_fingerprint, first.corpus_fingerprint),
            ("model", partial.model_sha256, first.model_sha256),
            ("datasets", _dataset_fingerprints(partial), _dataset_fingerprints(first)),
        ):
            if mine != theirs:
                raise InputError(
                    f"its {what} fingerprint differs from {first_path / PARTIAL_FILE}'s: "
                    "every shard must evaluate the same commit",
                    file=where,
                )
    seen: dict[int, Path] = {}
    for path, partial in partials:
        if partial.shard_index in seen:
            raise InputError(
                f"shard {partial.shard_index}/{partial.shard_count} is given twice "
                f"(also {seen[partial.shard_index]})",
                file=path,
            )
        seen[partial.shard_index] = path
    missing = sorted(set(range(1, first.shard_count + 1)) - set(seen))
    if missing:
        shown = ", ".join(f"{index}/{first.shard_count}" for index in missing)
        raise InputError(f"shard(s) {shown} missing: give every shard's report folder")


@dataclass(frozen=True)
class CheckedOut:
    """One dataset file as the merge's own checkout holds it."""

    files_sha256: str
    query_order: tuple[str, ...]
    fixture_records: Mapping[str, str]  # query id -> fixture_record, every fixture


def check_against_checkout(
    partials: Sequence[tuple[Path, Partial]],
    own: Mapping[str, CheckedOut],
    *,
    corpus_fingerprint: str,
) -> None:
    """Each partial is of this checkout: its corpus, its datasets, their bytes, their query
    ids in order, and for its shard's queries exactly this checkout's fixtures, each
    measured. The shards
    agreeing with each other is not enough: one forged partial (a shard job whose Action
    was tampered with) would otherwise decide which queries the verdict counts."""
    for path, partial in partials:
        where = path / PARTIAL_FILE
        shard = Shard(partial.shard_index, partial.shard_count)
        if partial.corpus_fingerprint != corpus_fingerprint:
            raise InputError(
                f"its corpus is not this checkout's (shard {shard}): every shard must "
                "evaluate the merge's commit",
                file=where,
            )
        names = sorted(share.report.name for share in partial.datasets)
        if names != sorted(own):
            raise InputError(
                f"holds the datasets {names}, but this checkout has {sorted(own)}: every "
                "shard must evaluate the merge's commit",
                file=where,
            )
        for share in partial.datasets:
            name, mine = share.report.name, own[share.report.name]
            expected = {q: r for q, r in mine.fixture_records.items() if shard.holds(q)}
            measured = {query.query_id for query in share.report.queries}
            for what, differs in (
                ("file", share.files_sha256 != mine.files_sha256),
                ("query ids", tuple(share.query_order) != mine.query_order),
                ("fixtures", dict(share.fixture_records) != expected),
                ("measured queries", measured != set(expected)),
            ):
                if differs:
                    raise InputError(
                        f"its {what} of {name} are not this checkout's (shard {shard}): every "
                        "shard must evaluate the merge's commit",
                        file=where,
                    )


def _dataset_fingerprints(partial: Partial) -> list[tuple[str, str]]:
    return [(d.report.name, d.files_sha256) for d in partial.datasets]


def file_sha256(path: Path) -> str:
    """sha256 of a dataset file's bytes: every shard of one commit reads the same ones."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def merge_datasets(partials: Sequence[Partial], settings: RunSettings) -> list[DatasetReport]:
    """The measured datasets an unsharded run would have produced (before gating)."""
    merged = []
    for position, first in enumerate(partials[0].datasets):
        shares = [partial.datasets[position] for partial in partials]
        merged.append(_merge_dataset(first, shares, settings))
    return merged


def merge_challengers(partials: Sequence[Partial], position: int) -> tuple[Side, ...]:
    """The challengers of the dataset at ``position`` over every shard's queries, in the
    dataset's fixture order, as an unsharded run measures them; a challenger that failed
    on any shard has that shard's warning and no scores."""
    # check_complete has held every partial to one configuration, so each shard lists
    # the dataset's challengers alike, in the configuration's order.
    shares = [partial.datasets[position] for partial in partials]
    order = shares[0].query_order
    sides = []
    for at, first in enumerate(shares[0].challengers):
        mine = [share.challengers[at] for share in shares]
        # A challenger has scores exactly when it has no warning (pipeline._challenge).
        warning = next((c.warning for c in mine if c.warning is not None), None)
        if warning is not None:
            sides.append(Side(first.name, first.retriever, None, warning))
            continue
        scores = Scores(
            retriever=first.retriever,
            config=first.config,
            metrics=_in_order(order, [c.metrics for c in mine]),
            latency_ms=_in_order(order, [c.latency_ms for c in mine]),
            cost_usd=_in_order(order, [c.cost_usd for c in mine]),
        )
        sides.append(Side(first.name, first.retriever, scores, None))
    return tuple(sides)


def _in_order(order: Sequence[str], parts: Sequence[dict[str, Any]]) -> dict[str, Any]:
    joined: dict[str, Any] = {}
    for part in parts:
        joined.update(part)
    return {qid: joined[qid] for qid in order if qid in joined}


# Each query's fields read at C speed (map), as the merge passes over every query.
_QUERY_ID = attrgetter("query_id")
_LATENCY_MS = attrgetter("latency_ms")
_EXPECT_EMPTY = attrgetter("expect_empty")
_COST_USD = attrgetter("cost_usd")


def _merge_dataset(
    first: PartialDataset, shares: Sequence[PartialDataset], settings: RunSettings
) -> DatasetReport:
    by_id: dict[str, QueryResult] = {}
    types: dict[str, str] = {}
    records: dict[str, str] = {}
    for share in shares:
        shard_queries = share.report.queries
        by_id.update(zip(map(_QUERY_ID, shard_queries), shard_queries, strict=True))
        types.update(share.retrieval_types)
        records.update(share.fixture_records)
    if set(by_id) != set(first.query_order):
        raise InputError(
            f"{first.report.name}: the shards hold {len(by_id)} of its "
            f"{len(first.query_order)} queries; were they made with another --shard count?"
        )
    queries = list(map(by_id.__getitem__, first.query_order))
    latency = latency_summary([latency_ms / 1000.0 for latency_ms in map(_LATENCY_MS, queries)])
    return first.report.model_copy(
        update={
            "dataset_fingerprint": fingerprint_of_records(records.items()),
            # Each shard indexed the whole corpus itself: the slowest one is the setup.
            "setup_s": max(share.report.setup_s for share in shares),
            "num_queries": len(queries),
            "num_scored": len(queries) - sum(map(_EXPECT_EMPTY, queries)),
            "aggregates": aggregates(
                queries, [*settings.measures, GROUNDEDNESS], seed=settings.seed
            ),
            "latency": Latency(
                p50_ms=latency.p50_ms or 0.0,
                p95_ms=latency.p95_ms or 0.0,
                p99_ms=latency.p99_ms or 0.0,
                mean_ms=latency.mean_ms or 0.0,
                count=latency.count,
            ),
            "cost_per_query_usd": cost_summary(list(map(_COST_USD, queries))),
            "breakdowns": breakdowns(queries, types),
            "queries": tuple(queries),
            "labels": label_coverage(queries, settings.k),
            "queries_missing": _queries_missing(shares),
            "embedded_texts": _embedding_count(shares, 0),
            "cached_embeddings": _embedding_count(shares, 1),
            # One shard's hits without text leave its queries without groundedness: the
            # merged mean would be over the other shards' only, so it is left out for all.
            "groundedness_left_out": next(
                (s.report.groundedness_left_out for s in shares if s.report.groundedness_left_out),
                None,
            ),
            "repeats": merge_spreads(
                [(s.report.repeats, s.report.num_scored) for s in shares if s.report.repeats]
            ),
            "ann_fidelity": _ann_fidelity(shares),
            "collapse": _collapse(shares),
        }
    )


def _ann_fidelity(shares: Sequence[PartialDataset]) -> AnnFidelitySummary | None:
    """Each shard measured its own sample: the mean over all their queries."""
    measured = [s.report.ann_fidelity for s in shares if s.report.ann_fidelity is not None]
    if not measured:
        return None
    queries = sum(m.queries for m in measured)
    recall = sum(m.recall * m.queries for m in measured) / queries
    return measured[0].model_copy(update={"queries": queries, "recall": recall})


def _collapse(shares: Sequence[PartialDataset]) -> CollapseSummary | None:
    """Each shard counted its own queries' documents: the sum."""
    counted = [s.report.collapse for s in shares if s.report.collapse is not None]
    if not counted:
        return None
    histogram: dict[int, int] = {}
    for summary in counted:
        for n, documents in summary.histogram.items():
            histogram[n] = histogram.get(n, 0) + documents
    return CollapseSummary(
        results=sum(c.results for c in counted),
        documents=sum(c.documents for c in counted),
        histogram=dict(sorted(histogram.items())),
    )


def _queries_missing(shares: Sequence[PartialDataset]) -> int | None:
    """A run file's unanswered queries: each shard counted its own."""
    counts = [share.report.queries_missing for share in shares]
    if all(count is None for count in counts):
        return None
    return sum(count or 0 for count in counts)


def _embedding_count(shares: Sequence[PartialDataset], which: int) -> int | None:
    """What the unsharded run would count. Indexing counts once: every shard indexed the
    same corpus, and counting it N times would report work the unsharded run never does.
    Queries add up (each shard embeds or finds cached its own; the warm-up is not counted)."""
    counts = [
        share.report.embedded_texts if which == 0 else share.report.cached_embeddings
        for share in shares
    ]
    if all(value is None for value in counts):
        return None
    indexing = max(share.index_embedding_counts[which] for share in shares)
    queries = sum(value or 0 for value in counts)
    return indexing + queries


def shard_partial(
    shard: Shard,
    settings: RunSettings,
    *,
    corpus_fingerprint: str,
    model_sha256: str | None,
    datasets: Sequence[PartialDataset],
) -> Partial:
    return Partial(
        shard_index=shard.index,
        shard_count=shard.count,
        config_fingerprint=config_fingerprint(settings),
        corpus_fingerprint=corpus_fingerprint,
        model_sha256=model_sha256,
        datasets=tuple(datasets),
    )
