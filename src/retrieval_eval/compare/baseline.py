"""baseline.json: what the gate compares against, and the baseline-null rule.

The file is committed, reviewed in diffs and sometimes edited by hand (a
first baseline may hold ``null`` values), so it is written with sorted
keys and without timestamps: re-running on an unchanged tree changes nothing.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from itertools import chain, repeat
from operator import attrgetter, contains
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from retrieval_eval.errors import InputError
from retrieval_eval.fileio import atomic_write_text
from retrieval_eval.load.input_files import read_regular_bytes
from retrieval_eval.load.invisible import same_id
from retrieval_eval.results import DatasetReport, Environment, RemovedDataset
from retrieval_eval.vocabulary import COST_PER_QUERY, JUDGE, LATENCY_P95, LOWER_IS_BETTER

BASELINE_SCHEMA_VERSION = 1
# This repository's baseline.json holds 723 bytes per query (77 queries, k = 10, ids of
# about 20 characters); 1 GiB holds about 1.5 million such queries, fifteen times the
# 100,000 the parser below is tuned for. A larger file is not a baseline.
BASELINE_MAX_BYTES = 1 << 30


class BaselineQuery(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    query: str = ""
    first_relevant_rank: int | None = None
    metrics: dict[str, float | None] | None = None
    # Kept only together: a judge score means something only for the text it judged.
    judge_fingerprint: str | None = None
    judge_score: float | None = None
    # Informational, never compared by the gate: the ids the baseline's run ranked in its
    # top k, so a later run can tell which unlabelled documents are new there (holes).
    retrieved: tuple[str, ...] | None = None


class BaselineDataset(BaseModel):
    """One dataset file's recorded values. Any ``null`` value means "not established yet"."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    retriever: str | None = None
    retriever_config: dict[str, object] = Field(default_factory=dict)
    k: int | None = None
    measures: tuple[str, ...] = ()
    dataset_fingerprint: str | None = None
    corpus_fingerprint: str | None = None
    aggregates: dict[str, float | None] | None = None
    queries: dict[str, BaselineQuery] | None = None
    # Informational, never gated: the labelled share of the results at k (score/labels.py),
    # for the report to say when it dropped. Older baselines have none.
    labelled_share: float | None = None

    @field_validator("queries")
    @classmethod
    def _ids_compared_in_nfc(
        cls, queries: dict[str, BaselineQuery] | None
    ) -> dict[str, BaselineQuery] | None:
        """Query ids as fixtures give them (NFC), so a recorded id typed decomposed is not
        taken for a removed query."""
        if queries is None or all(map(str.isascii, queries)):
            return queries
        return {same_id(query_id): query for query_id, query in queries.items()}

    def is_null(self) -> bool:
        """The baseline-null rule: ``null`` values are established, not compared."""
        if self.aggregates is None or self.queries is None:
            return True
        if any(value is None for value in self.aggregates.values()):
            return True
        # At C speed (map): a baseline holds every query of its dataset, 100,000 or more.
        metrics = list(map(_METRICS, self.queries.values()))
        return None in metrics or any(map(contains, map(dict.values, metrics), repeat(None)))

    def recorded_measures(self) -> tuple[str, ...]:
        """The measures this entry says it holds (older files: its aggregates' names)."""
        if self.measures:
            return self.measures
        return tuple(m for m in (self.aggregates or {}) if m not in LOWER_IS_BETTER)

    def corruption(self, required: Iterable[str] = ()) -> str | None:
        """Why values this entry claims cannot be compared against, or None when sound.

        A comparison needs a finite number on both sides: NaN makes every
        ``<`` false, and a value nobody recorded compares against nothing, so
        either would switch the gate off without a word. ``required`` are the
        metrics the run gates on. Explicit ``null`` s are the null rule, not damage.
        """
        if "aggregates" not in self.model_fields_set:
            return "it has no `aggregates` (write `null` to have this run establish it)"
        # NaN or infinity is damage wherever it sits, even beside a null: the null rule
        # would otherwise let this run overwrite the file.
        for name, value in (self.aggregates or {}).items():
            if value is not None and not math.isfinite(value):
                return f"aggregates.{name} is {value} (not a finite number)"
        if not _all_finite(self.queries or {}):
            return self._first_not_finite()
        claims = any(value is not None for value in (self.aggregates or {}).values())
        if claims and "queries" not in self.model_fields_set:
            return "it has no `queries` (write `null` to have this run establish it)"
        if self.is_null():
            return None
        assert self.aggregates is not None and self.queries is not None
        if not self.aggregates:
            return "`aggregates` is empty"
        recorded = self.recorded_measures()
        # A required measure the entry never recorded is new, not damage: it is reported
        # (not gated) until a run that writes the baseline establishes it. Latency and cost
        # are recorded in every entry, so a missing one was removed by hand.
        never = (m for m in required if m not in recorded and m in LOWER_IS_BETTER)
        for name in (*recorded, *never):
            if name not in self.aggregates:
                return f"{name} has no value in aggregates"
            per_query = name not in LOWER_IS_BETTER and name != JUDGE
            if per_query and not any(name in (q.metrics or {}) for q in self.queries.values()):
                return f"no query has a value for {name} (every `metrics` object lacks it)"
        return None

    def _first_not_finite(self) -> str:
        """The first per-query value that is NaN or infinite, named."""
        for query_id, query in (self.queries or {}).items():
            for name, value in (query.metrics or {}).items():
                if value is not None and not math.isfinite(value):
                    return f"queries.{query_id}.metrics.{name} is {value} (not a finite number)"
            if query.judge_score is not None and not math.isfinite(query.judge_score):
                return f"queries.{query_id}.judge_score is not a finite number"
        raise AssertionError("called with every per-query value finite")


_METRICS = attrgetter("metrics")
_JUDGE_SCORE = attrgetter("judge_score")


def _all_finite(queries: Mapping[str, BaselineQuery]) -> bool:
    """Whether every recorded per-query value (metrics, judge score) is finite or null,
    read at C speed: a baseline holds 100,000 queries or more."""
    metrics = list(map(_METRICS, queries.values()))
    if None in metrics:
        metrics = [m for m in metrics if m is not None]
    values = [*chain.from_iterable(map(dict.values, metrics)), *map(_JUDGE_SCORE, queries.values())]
    if None in values:
        values = [v for v in values if v is not None]
    return all(map(math.isfinite, values))


class BaselineAgreement(BaseModel):
    """The judge's agreement with the human tier, recorded for the judge model and label
    prompt it was measured with: a later run reuses it while both are unchanged."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    model: str
    prompt_sha256: str
    seed: int
    sample_size: int
    kappa: float | None = None
    accuracy: float | None = None


class Baseline(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    schema_version: int = BASELINE_SCHEMA_VERSION
    environment: Environment | None = None
    datasets: dict[str, BaselineDataset | None] = Field(default_factory=dict)
    # The judged tier's values, compared as a dataset's are, and the agreement its gating
    # rested on. Kept apart from `datasets`: the tier is never one of the human datasets.
    judged_tier: BaselineDataset | None = None
    judge_agreement: BaselineAgreement | None = None

    def established(self, dataset: str) -> BaselineDataset | None:
        """The dataset's values when they can be compared against, else None."""
        entry = self.datasets.get(dataset)
        if entry is None or entry.is_null():
            return None
        return entry


def _parsed(text: str, path: Path) -> Baseline:
    """A well-formed baseline is validated straight from its text by pydantic's parser
    (building the standard library's objects first takes as long again at 100,000
    queries). Strictly: what needs a conversion (``"1"`` for 1) is read step by step as
    before, which also gives the message that says what is wrong."""
    try:
        fast = Baseline.model_validate_json(text, strict=True)
    except ValidationError:
        pass
    else:
        if fast.schema_version == BASELINE_SCHEMA_VERSION:
            return fast
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise InputError(
            f"the baseline is not valid JSON ({error.msg}, column {error.colno}); fix it, "
            "or delete it to establish a new baseline",
            file=path,
            line=error.lineno,
        ) from error
    if not isinstance(data, dict):
        raise InputError("the baseline must be a JSON object", file=path, line=1)
    version = data.get("schema_version")
    if version is not None and version != BASELINE_SCHEMA_VERSION:
        raise InputError(
            f"baseline schema_version {version!r} is not supported (expected "
            f"{BASELINE_SCHEMA_VERSION}); run `retrieval-eval baseline update` to rewrite it",
            file=path,
        )
    try:
        baseline = Baseline.model_validate(data)
    except ValidationError as error:
        first = error.errors()[0]
        key = ".".join(str(part) for part in first["loc"])
        raise InputError(
            f"the baseline is malformed at '{key}': {first['msg']}", file=path
        ) from error
    return baseline


def load_baseline(path: Path, *, gated: Iterable[str] = ()) -> Baseline | None:
    """None when the file is missing; a corrupt file is an error that leaves it untouched.

    ``gated`` are the metrics the run gates on: an established entry must hold
    a finite value for each, or the gate would compare nothing.
    """
    if not path.exists():
        return None
    # Through the input-file rules: a FIFO or a device is refused at once, never waited on.
    data = read_regular_bytes(path, max_bytes=BASELINE_MAX_BYTES, what="baseline")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise InputError(f"cannot read the baseline: {error}", file=path) from error
    baseline = _parsed(text, path)
    required = tuple(gated)
    entries = [(f"datasets.{name}", entry) for name, entry in baseline.datasets.items()]
    for where, entry in [*entries, ("judged_tier", baseline.judged_tier)]:
        problem = None if entry is None else entry.corruption(required)
        if problem is not None:
            raise InputError(
                f"the baseline is corrupt at {where}: {problem}; restore it from "
                "history, or run `retrieval-eval baseline update` to measure it anew",
                file=path,
            )
    return baseline


def recorded_models(baseline: Baseline | None) -> set[str]:
    """Every ``model`` the baseline's retrievers recorded in their configuration, nested
    sides included (a hybrid's dense side): what ``model = "auto"`` keeps."""
    found: set[str] = set()
    pending: list[object] = [
        e.retriever_config for e in (baseline.datasets if baseline else {}).values() if e
    ]
    while pending:
        item = pending.pop()
        if isinstance(item, dict):
            model = item.get("model")
            if isinstance(model, str):
                found.add(model)
            pending.extend(item.values())
    return found


def models_recorded_at(path: Path) -> set[str]:
    """``recorded_models`` of the baseline file, for the commands that only read it for
    that (`embed`, `compare`, `tune`, a shard): a file they cannot read records none."""
    try:
        return recorded_models(load_baseline(path))
    except InputError:
        return set()


def removed_datasets(
    baseline: Baseline | None, *, evaluated: Iterable[str]
) -> tuple[RemovedDataset, ...]:
    """Datasets with established baseline values that this run did not evaluate."""
    if baseline is None:
        return ()
    present = set(evaluated)
    return tuple(
        RemovedDataset(
            name=name,
            retriever=entry.retriever,
            baselined_queries=len(entry.queries or {}),
        )
        for name in sorted(baseline.datasets)
        if name not in present and (entry := baseline.established(name)) is not None
    )


def baseline_entry(report: DatasetReport, *, k: int) -> BaselineDataset:
    return BaselineDataset(
        retriever=report.retriever,
        retriever_config=report.retriever_config,
        k=k,
        measures=tuple(sorted(report.aggregates)),
        dataset_fingerprint=report.dataset_fingerprint,
        corpus_fingerprint=report.corpus_fingerprint,
        labelled_share=None
        if report.labels is None or report.labels.share is None
        else round(report.labels.share, 12),
        aggregates={
            **{name: round(agg.value, 12) for name, agg in sorted(report.aggregates.items())},
            LATENCY_P95: round(report.latency.p95_ms, 6),
            COST_PER_QUERY: round(report.cost_per_query_usd, 12),
        },
        queries={
            q.query_id: BaselineQuery(
                query=q.query,
                first_relevant_rank=q.first_relevant_rank,
                metrics={name: round(value, 12) for name, value in sorted(q.metrics.items())},
                judge_fingerprint=q.judge_fingerprint if q.judge_score is not None else None,
                judge_score=None if q.judge_score is None else round(q.judge_score, 12),
                retrieved=q.retrieved[:k],
            )
            for q in report.queries
        },
    )


def updated_baseline(
    previous: Baseline | None,
    reports: Iterable[DatasetReport],
    *,
    environment: Environment,
    k: int,
    only: Iterable[str] | None = None,
) -> Baseline:
    """``previous`` with the given datasets' entries replaced (all of them when ``only`` is None).

    Entries not replaced stay byte-identical, so establishing one dataset's
    baseline never silently moves another's.
    """
    chosen = None if only is None else set(only)
    entries: dict[str, BaselineDataset | None] = dict(previous.datasets) if previous else {}
    for report in reports:
        if chosen is None or report.name in chosen:
            entries[report.name] = baseline_entry(report, k=k)
    return Baseline(
        environment=environment,
        datasets=dict(sorted(entries.items())),
        judged_tier=previous.judged_tier if previous else None,
        judge_agreement=previous.judge_agreement if previous else None,
    )


def with_new_measures(
    previous: Baseline, reports: Iterable[DatasetReport]
) -> tuple[Baseline, tuple[str, ...]] | None:
    """``previous`` with each established entry given the measures it never recorded, from
    this run (mean and per-query values); the values it holds stay as they were. None when
    no entry lacks one. With the datasets' names whose entries gained a measure."""
    entries = dict(previous.datasets)
    extended = []
    for report in reports:
        entry = previous.established(report.name)
        if entry is None:
            continue
        recorded = entry.recorded_measures()
        # The judge's scores are kept per query beside the measures, and only by a judged
        # `baseline update`: a measure of its own, not established here.
        new = [n for n in sorted(report.aggregates) if n not in recorded and n != JUDGE]
        if not new:
            continue
        assert entry.aggregates is not None and entry.queries is not None
        fresh = baseline_entry(report, k=entry.k or 0)
        assert fresh.aggregates is not None and fresh.queries is not None
        queries = {
            query_id: query.model_copy(
                update={
                    "metrics": {
                        **(query.metrics or {}),
                        **{
                            name: value
                            for name, value in (fresh.queries[query_id].metrics or {}).items()
                            if name in new
                        },
                    }
                }
            )
            if query_id in fresh.queries
            else query
            for query_id, query in entry.queries.items()
        }
        entries[report.name] = entry.model_copy(
            update={
                "measures": tuple(sorted({*recorded, *new})),
                "aggregates": dict(
                    sorted({**entry.aggregates, **{n: fresh.aggregates[n] for n in new}}.items())
                ),
                "queries": {
                    qid: q.model_copy(update={"metrics": dict(sorted((q.metrics or {}).items()))})
                    for qid, q in queries.items()
                },
            }
        )
        extended.append(report.name)
    if not extended:
        return None
    return previous.model_copy(update={"datasets": entries}), tuple(extended)


def write_baseline(path: Path, baseline: Baseline) -> None:
    data = baseline.model_dump(mode="json")
    # A baseline without the judged tier stays as it was written before the tier existed.
    for key in ("judged_tier", "judge_agreement"):
        if data.get(key) is None:
            data.pop(key, None)
    # A never-judged baseline should not carry two nulls per query through every diff.
    # Nor should an entry written before the informational keys existed gain nulls for them.
    for entry in [*data["datasets"].values(), data.get("judged_tier")]:
        if entry is not None and entry.get("labelled_share") is None:
            entry.pop("labelled_share", None)
        for query in ((entry or {}).get("queries") or {}).values():
            for key in _OPTIONAL_QUERY_KEYS:
                if query.get(key) is None:
                    query.pop(key, None)
    atomic_write_text(path, dump_json(data))


_OPTIONAL_QUERY_KEYS = ("judge_fingerprint", "judge_score", "retrieved")


def dump_json(data: Mapping[str, object]) -> str:
    return json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
