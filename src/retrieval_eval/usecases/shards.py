"""One evaluation split across the jobs of a CI matrix: `retrieval-eval embed --shard`,
`run --shard` and `merge`, and the Action's `embed-shard`, `evaluate-shard` and `merge`.

An embedding shard embeds its slice of the corpus's chunks into the cache, which the
evaluate shards then share. An evaluate shard validates its own fixtures (the shard that
owns a bad line fails on it, with the message an unsharded run gives; the per-file counts
take in every line), indexes the whole corpus, searches only its own slice of the queries
and writes their results to ``partial.json``. The merge checks that the partials belong
together, recomputes every mean and interval over all queries and then concludes exactly
as ``run`` does: the same gate, baseline rule and report. Each of the three runs within
``time_limit_s``, as ``run`` does (usecases/time_bound.py).
"""

from __future__ import annotations

import gc
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from pydantic import SecretStr

from retrieval_eval import deadline
from retrieval_eval.compare.baseline import (
    Baseline,
    load_baseline,
    models_recorded_at,
    recorded_models,
)
from retrieval_eval.compare.dense_model import choose_run_model, resolve_dense_model
from retrieval_eval.compare.gate import gate_dataset, pooled_headline
from retrieval_eval.compare.judge_column import carry_over, with_fingerprints
from retrieval_eval.compare.partial import (
    CheckedOut,
    Partial,
    PartialChallenger,
    PartialDataset,
    check_against_checkout,
    check_complete,
    config_fingerprint,
    file_sha256,
    merge_challengers,
    merge_datasets,
    read_partial,
    shard_partial,
    write_partial,
)
from retrieval_eval.compare.policy import gate_policy
from retrieval_eval.errors import ConfigError, InputError, RetrievalEvalError
from retrieval_eval.index.cache_merge import merge_caches
from retrieval_eval.index.model_catalog import AUTO_INT8_ABOVE, model_spec
from retrieval_eval.index.model_install import verify_model_of
from retrieval_eval.load.corpus import load_corpus
from retrieval_eval.pipeline import (
    RunOutcome,
    against_gated,
    conclude,
    error_outcome,
    gated_metrics,
    invalid_outcome,
    load_and_validate,
    search_and_measure,
)
from retrieval_eval.progress import Log, stderr_log, step
from retrieval_eval.render.links import ReportLinks
from retrieval_eval.retrieval.builtin.embed_shard import EmbedSummary, embed_into_cache
from retrieval_eval.score.measurements import fixture_record, retrieval_types
from retrieval_eval.settings import RunSettings
from retrieval_eval.sharding import Shard
from retrieval_eval.usecases.time_bound import bounded
from retrieval_eval.vocabulary import ExitCode


@dataclass(frozen=True)
class ShardOutcome:
    exit_code: ExitCode
    summary: str
    partial: Path | None = None
    invalid: RunOutcome | None = None


@bounded
def embed_shard(
    settings: RunSettings,
    shard: Shard | None,
    *,
    log: Log = stderr_log,
    progress: bool | None = None,
) -> EmbedSummary:
    """Embed the corpus's dense chunks (a shard's: its slice of them) into the embedding
    cache, with the model the whole corpus chooses, as `run`, every shard and the merge do.

    ``progress``: a bar (True) or a line every few seconds (False) while embedding, then
    the step's count and time; None: neither (the Action's job logs the summary alone)."""
    corpus = load_corpus(settings.corpus)
    settings, _ = choose_run_model(settings, corpus, models_recorded_at(settings.baseline), log)
    dense = settings.retrievers.dense
    if progress is None:
        with deadline.step("embedding"):  # named as the step below names itself
            return embed_into_cache(corpus, dense, shard)
    with step(
        "embedding",
        None,
        interactive=progress,
        log=log,
        unit="text",
        pace=settings.progress.pace(),
    ) as tracker:
        return embed_into_cache(
            corpus, dense, shard, lambda done, total: tracker.update(done, total)
        )


@bounded
def evaluate_shard(
    settings: RunSettings,
    shard: Shard,
    *,
    progress: bool,
    log: Log = stderr_log,
    warn: Log | None = None,
    anthropic_api_key: SecretStr | None = None,
    caches: Sequence[Path] = (),
) -> ShardOutcome:
    """Evaluate this shard's queries of every dataset and write ``partial.json``.

    ``anthropic_api_key`` is for a hybrid's Claude reranker, as in ``run``. ``caches`` are
    the embedding shards' caches: merged into this run's cache before anything is indexed,
    once the dense model is chosen, and only vectors of that model are taken (``warn``
    hears what was left out)."""
    if settings.judge.enabled:
        raise ConfigError(
            "the LLM judge does not run in sharded evaluation: turn it off for "
            "`run --shard` ([judge] enabled = false, no --judge)"
        )
    if settings.judged.enabled:
        raise ConfigError(
            "the judged tier does not run in sharded evaluation: turn it off for "
            "`run --shard` ([judged] enabled = false)"
        )
    corpus, validation = load_and_validate(settings, shard)
    if validation.problems:
        outcome = invalid_outcome(validation.problems)
        return ShardOutcome(outcome.exit_code, outcome.status_description, invalid=outcome)
    # As the merge will, so that every shard and the merge choose the same model.
    settings, _ = choose_run_model(settings, corpus, models_recorded_at(settings.baseline), log)
    if caches:
        _merge_caches(settings, caches, log=log, warn=warn or log)
    run = search_and_measure(
        settings,
        corpus,
        validation,
        interactive=progress,
        log=log,
        rerank_key=anthropic_api_key.get_secret_value() if anthropic_api_key else None,
        shard=shard,
    )
    shares = [
        PartialDataset(
            report=with_fingerprints(one.measured, one.searched.passages()),
            query_order=validation.query_order[one.path],
            retrieval_types=retrieval_types(one.mine),
            fixture_records={lf.fixture.query_id: fixture_record(lf) for lf in one.mine},
            files_sha256=file_sha256(one.path),
            index_embedding_counts=one.index_embedding_counts,
            challengers=tuple(PartialChallenger.of(side) for side in one.challengers),
        )
        for one in run.datasets
    ]
    searched = sum(len(one.mine) for one in run.datasets)
    total = sum(len(validation.query_order[one.path]) for one in run.datasets)
    model_sha256 = run.model_sha256
    partial = shard_partial(
        shard,
        settings,
        corpus_fingerprint=corpus.fingerprint(),
        model_sha256=model_sha256,
        datasets=shares,
    )
    path = write_partial(partial, settings.report_dir)
    return ShardOutcome(
        ExitCode.OK,
        f"shard {shard}: evaluated {searched} of {total} queries; partial result in {path}",
        partial=path,
    )


def _merge_caches(settings: RunSettings, caches: Sequence[Path], *, log: Log, warn: Log) -> None:
    """The embedding shards' caches, merged into this run's: the vectors must be those of
    the model this run embeds with, whichever it is."""
    dense = settings.retrievers.dense
    if dense.model_dir is None:
        return
    spec = model_spec(dense.model)
    model = verify_model_of(dense.model_dir, spec)
    merged = merge_caches(settings.cache_dir, caches, model, spec)
    for warning in merged.warnings:
        warn(warning)
    log(f"merged the embedding caches: {merged.added} vectors from {merged.sources} cache(s)")


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Python's cyclic garbage collector off for the duration. A merge builds millions of
    objects that hold no cycles (every query of the partials and of the baseline) and keeps
    them to the end; with the collector on, it walks all of them each time they grow by a
    quarter: a fifth of `merge`'s time at 100,000 queries, to free nothing. The objects
    made meanwhile are frozen out of the collector's view before it resumes: its first
    collection would otherwise walk every one of them (half a second at 100,000 queries).
    Frozen objects are still freed when no longer referenced."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.freeze()
            gc.enable()


@bounded
@_collector_paused()
def merge_shards(
    settings: RunSettings,
    shard_dirs: Sequence[Path],
    *,
    notices: Sequence[str] = (),
    write_baseline: bool = True,
    log: Log = stderr_log,
    links: ReportLinks | None = None,
    stale: str | None = None,
) -> RunOutcome:
    """Combine the partials, gate once and write the report (and baseline) as ``run`` would."""
    started = time.perf_counter()
    try:
        with deadline.step("reading the partials and the baseline"):
            partials = [(directory, read_partial(directory)) for directory in shard_dirs]
            previous = load_baseline(settings.baseline, gated=gated_metrics(settings))
            settings, dense_model = _shards_dense_model(
                settings, partials[0][1] if partials else None, previous
            )
            check_complete(partials, settings)
        with deadline.step("checking the partials against this checkout"):
            corpus_fingerprint, own = _checked_out(settings)
            check_against_checkout(partials, own, corpus_fingerprint=corpus_fingerprint)
        ordered = [partial for _, partial in sorted(partials, key=lambda p: p[1].shard_index)]
        policy = gate_policy(settings)
        datasets = []
        challengers = []
        for position, measured in enumerate(merge_datasets(ordered, settings)):
            recorded = previous.datasets.get(measured.name) if previous else None
            entry = previous.established(measured.name) if previous else None
            datasets.append(gate_dataset(carry_over(measured, recorded), entry, settings, policy))
            sides = merge_challengers(ordered, position)
            if sides:
                challengers.append(against_gated(settings, measured, sides))
        return conclude(
            settings,
            datasets,
            previous=previous,
            pooled=pooled_headline(datasets, previous, policy),
            model_sha256=ordered[0].model_sha256,
            dense_model=dense_model,
            started=started,
            notices=notices,
            write=write_baseline,
            rewrite=False,
            log=log,
            challengers=tuple(challengers),
            links=links,
            stale=stale,
        )
    except RetrievalEvalError as error:
        return error_outcome(error)


def _checked_out(settings: RunSettings) -> tuple[str, dict[str, CheckedOut]]:
    """The merge's own corpus fingerprint and datasets, read from its checkout as a shard
    reads them."""
    corpus, validation = load_and_validate(settings)
    if validation.problems:
        raise InputError(
            f"this checkout's datasets do not validate ({validation.problems[0]}): the merge "
            "checks the shards' partials against them"
        )
    return corpus.fingerprint(), {
        path.name: CheckedOut(
            files_sha256=file_sha256(path),
            query_order=validation.query_order.get(path)
            or tuple(lf.fixture.query_id for lf in fixtures),
            fixture_records={lf.fixture.query_id: fixture_record(lf) for lf in fixtures},
        )
        for path, fixtures in validation.datasets.items()
    }


def _shards_dense_model(
    settings: RunSettings, partial: Partial | None, previous: Baseline | None
) -> tuple[RunSettings, str | None]:
    """The settings as the shards resolved ``"auto"``, and the report's line: the merge has
    no corpus to count, so it takes the resolution, by the shards' rule on the same
    baseline, whose configuration the shards' partials were made with."""
    if partial is None:
        return settings, None
    recorded = recorded_models(previous)
    for documents in (0, AUTO_INT8_ABOVE + 1):
        resolved, choice = resolve_dense_model(settings, documents=documents, recorded=recorded)
        if config_fingerprint(resolved) == partial.config_fingerprint:
            return resolved, None if choice is None else choice.line
    return settings, None  # check_complete names the difference
