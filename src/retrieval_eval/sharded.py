"""`run --shard I/N` and `merge`: one evaluation split across the jobs of a CI matrix.

A shard validates every dataset (so each job fails fast on the same problems),
indexes the whole corpus, searches only its own slice of the queries and writes
their results to ``partial.json``. The merge checks that the partials belong
together, recomputes every mean and interval over all queries and then
finishes exactly as ``run`` does: the same gate, baseline rule and report.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from pydantic import SecretStr

from retrieval_eval.compare.baseline import load_baseline
from retrieval_eval.compare.gate import gate_dataset
from retrieval_eval.compare.judge_column import carry_over, with_fingerprints
from retrieval_eval.compare.partial import (
    PartialDataset,
    check_complete,
    merge_datasets,
    read_partial,
    shard_partial,
    write_partial,
)
from retrieval_eval.errors import ConfigError, RetrievalEvalError
from retrieval_eval.load.corpus import load_corpus
from retrieval_eval.pipeline import RunOutcome, conclude, error_outcome, invalid_outcome
from retrieval_eval.progress import Log, stderr_log
from retrieval_eval.retrieval.search import RetrieverPool, search_dataset
from retrieval_eval.score.measure import dataset_fingerprint, measure_dataset, retrieval_types
from retrieval_eval.settings import RunSettings
from retrieval_eval.sharding import Shard
from retrieval_eval.validate import validate_datasets
from retrieval_eval.vocabulary import LOWER_IS_BETTER, ExitCode


@dataclass(frozen=True)
class ShardOutcome:
    exit_code: ExitCode
    summary: str
    partial: Path | None = None
    invalid: RunOutcome | None = None


def run_shard(
    settings: RunSettings,
    shard: Shard,
    *,
    progress: bool,
    log: Log = stderr_log,
    anthropic_api_key: SecretStr | None = None,
) -> ShardOutcome:
    """Evaluate this shard's queries of every dataset and write ``partial.json``.

    ``anthropic_api_key`` is for a hybrid's Claude reranker, as in ``run``."""
    if settings.judge.enabled:
        raise ConfigError(
            "the LLM judge does not run in sharded evaluation: turn it off for "
            "`run --shard` ([judge] enabled = false, no --judge)"
        )
    corpus = load_corpus(settings.corpus)
    validation = validate_datasets(
        [settings.datasets],
        corpus=corpus,
        min_fixtures=settings.min_fixtures,
        min_human=settings.min_human,
    )
    if validation.problems:
        outcome = invalid_outcome(validation.problems)
        return ShardOutcome(outcome.exit_code, outcome.status_description, invalid=outcome)
    shares: list[PartialDataset] = []
    searched = total = 0
    with RetrieverPool(
        settings.retrievers,
        corpus,
        interactive=progress,
        log=log,
        cache_dir=settings.cache_dir,
        anthropic_api_key=anthropic_api_key.get_secret_value() if anthropic_api_key else None,
    ) as pool:
        for path, fixtures in sorted(validation.datasets.items()):
            mine = [lf for lf in fixtures if shard.holds(lf.fixture.query_id)]
            name = settings.require_retriever(path)
            # Indexed first, on its own: its embedding counts are the same in every shard
            # and must be counted once, while the queries' counts add up across shards.
            before = pool.embedding_counts()
            pool.get(name)
            after = pool.embedding_counts()
            searched_here = search_dataset(
                path, mine, pool, name=name, k=settings.k, interactive=progress, log=log
            )
            measured = measure_dataset(
                path=path,
                fixtures=mine,
                searched=searched_here,
                corpus_fingerprint=pool.corpus_fingerprint,
                measures=settings.measures,
                seed=settings.seed,
            )
            measured = with_fingerprints(measured, searched_here.passages()).model_copy(
                update={"dataset_fingerprint": dataset_fingerprint(fixtures)}
            )
            shares.append(
                PartialDataset(
                    report=measured,
                    query_order=tuple(lf.fixture.query_id for lf in fixtures),
                    retrieval_types=retrieval_types(mine),
                    index_embedding_counts=_difference(after, before),
                )
            )
            searched += len(mine)
            total += len(fixtures)
        model_sha256 = pool.model_sha256
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


def merge_shards(
    settings: RunSettings,
    shard_dirs: Sequence[Path],
    *,
    notices: Sequence[str] = (),
    write_baseline: bool = True,
    log: Log = stderr_log,
) -> RunOutcome:
    """Combine the partials, gate once and write the report (and baseline) as ``run`` would."""
    started = time.perf_counter()
    try:
        partials = [(directory, read_partial(directory)) for directory in shard_dirs]
        check_complete(partials, settings)
        ordered = [partial for _, partial in sorted(partials, key=lambda p: p[1].shard_index)]
        gated = [m for m in (*settings.measures, *LOWER_IS_BETTER) if settings.is_gated(m)]
        previous = load_baseline(settings.baseline, gated=gated)
        datasets = []
        for measured in merge_datasets(ordered, settings):
            recorded = previous.datasets.get(measured.name) if previous else None
            entry = previous.established(measured.name) if previous else None
            datasets.append(gate_dataset(carry_over(measured, recorded), entry, settings))
        return conclude(
            settings,
            datasets,
            previous=previous,
            model_sha256=ordered[0].model_sha256,
            started=started,
            notices=notices,
            write=write_baseline,
            rewrite=False,
            log=log,
        )
    except RetrievalEvalError as error:
        return error_outcome(error)


def _difference(after: tuple[int, int] | None, before: tuple[int, int] | None) -> tuple[int, int]:
    if after is None:
        return (0, 0)
    start = before or (0, 0)
    return (after[0] - start[0], after[1] - start[1])
