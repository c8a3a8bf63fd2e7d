"""Comparing N retrievers or configurations side by side (`retrieval-eval compare`), on a
datasets folder or a BEIR folder, each against the first.

A side is a retriever name (its settings are the configuration's ``[retrievers]``) or the
name of a ``[challengers.NAME]`` table. Each is compared with the first side as a challenger
is with the gated retriever in the comment, and printed as the same table: each headline
metric with its Δ, the paired randomization test's p (Holm-corrected across the sides),
per-query wins/ties/losses, latency p95 and cost per query; once over every query and once
per query type (a BEIR folder has none: one table). Sides share what they can: one pool
indexes the corpus once per retriever and its own settings (dense and hybrid share the
dense index), the embedding cache is the run's, and the ranked results of an in-process
retriever are kept in the run cache (retrieval/run_cache.py), so asking again retrieves
nothing.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from retrieval_eval.compare.baseline import models_recorded_at
from retrieval_eval.compare.challengers import Scores, Side, compare_challengers
from retrieval_eval.compare.dense_model import choose_run_model
from retrieval_eval.errors import ConfigError, InputError, RetrievalEvalError
from retrieval_eval.load.beir import load_beir
from retrieval_eval.load.corpus import load_corpus
from retrieval_eval.load.documents import Corpus
from retrieval_eval.progress import stderr_log
from retrieval_eval.render.markdown import HEADLINE_METRICS
from retrieval_eval.results import DatasetChallengers
from retrieval_eval.retrieval.config import RetrieversConfig
from retrieval_eval.retrieval.registry import RETRIEVER_NAMES
from retrieval_eval.retrieval.run_cache import read_run, run_key, write_run
from retrieval_eval.retrieval.search import RetrieverPool, own_settings
from retrieval_eval.retrieval.timed import QuerySpec, TimedResult, run_queries
from retrieval_eval.score.query_scores import score_queries
from retrieval_eval.settings import RunSettings
from retrieval_eval.validate import validate_datasets
from retrieval_eval.vocabulary import ExitCode

NO_QUERY_TYPE = "(none)"
# dataset -> side -> query id -> metric -> value
PerQuery = dict[str, dict[str, dict[str, dict[str, float]]]]


class InvalidDatasets(InputError):
    """The datasets failed validation: exit 1, as for `validate`, every problem listed."""

    exit_code = ExitCode.FAILED


class UnknownSide(ConfigError):
    """A side that names neither a retriever nor a challenger (the command's usage error)."""


@dataclass(frozen=True)
class SideSpec:
    """One side as the command line names it, resolved against the configuration."""

    name: str
    retriever: str
    config: RetrieversConfig
    unavailable: str | None = None


@dataclass(frozen=True)
class Dataset:
    name: str
    queries: tuple[QuerySpec, ...]
    qrels: Mapping[str, Mapping[str, int]]  # scored queries only
    query_types: Mapping[str, str]  # query id -> its type; empty: none has one


@dataclass(frozen=True)
class Comparison:
    """The sides' tables (the first side is the reference), and every query's values."""

    settings: RunSettings  # with the dense model the comparison used
    sides: tuple[SideSpec, ...]
    tables: list[DatasetChallengers]
    per_query: PerQuery

    @property
    def metrics(self) -> tuple[str, ...]:
        """The headline metrics the table shows."""
        return tuple(self.settings.measures[:HEADLINE_METRICS])

    def as_json(self) -> dict[str, Any]:
        return {
            "reference": self.sides[0].name,
            "sides": [{"name": s.name, "retriever": s.retriever} for s in self.sides],
            "k": self.settings.k,
            "measures": list(self.settings.measures),
            "tables": [table.model_dump(mode="json") for table in self.tables],
            "per_query": self.per_query,
        }


def compare_sides(
    settings: RunSettings,
    sides: Sequence[str],
    directory: Path | None,
    *,
    split: str,
    use_cache: bool,
    anthropic_api_key: str | None,
) -> Comparison:
    """Compare the named sides on ``directory`` (a BEIR folder, or a folder of datasets;
    None: the configured datasets on the configured corpus)."""
    for name in sides:  # a wrong name fails first
        side_spec(name, settings)
    corpus, datasets = _load(directory, settings, split)
    # The configured corpus keeps the baseline's model, as `run` does; a BEIR one has none.
    beir = directory is not None and (directory / "qrels").is_dir()
    recorded = set() if beir else models_recorded_at(settings.baseline)
    settings, _ = choose_run_model(settings, corpus, recorded, stderr_log)
    specs = [side_spec(name, settings) for name in sides]
    tables, per_query = _compare(
        settings, specs, corpus, datasets, use_cache=use_cache, anthropic_api_key=anthropic_api_key
    )
    return Comparison(settings, tuple(specs), tables, per_query)


def side_spec(name: str, settings: RunSettings) -> SideSpec:
    """A challenger's table when the configuration has one by that name, else the retriever
    of that name with the configuration's ``[retrievers]``."""
    challenger = settings.challengers.get(name)
    if challenger is not None:
        return SideSpec(name, challenger.retriever, challenger.retrievers, challenger.unavailable)
    if name in RETRIEVER_NAMES:
        return SideSpec(name, name, settings.retrievers)
    known = [*RETRIEVER_NAMES, *settings.challengers]
    raise UnknownSide(
        f"unknown side {name!r}; choose a retriever or a challenger: {', '.join(known)}"
    )


def _load(
    directory: Path | None, settings: RunSettings, split: str
) -> tuple[Corpus, list[Dataset]]:
    """A BEIR folder (it has qrels/) as one dataset, else each dataset file of the folder."""
    if directory is not None and (directory / "qrels").is_dir():
        data = load_beir(directory, split)
        for note in data.notes:
            stderr_log(f"note: {note}")
        queries = tuple(QuerySpec(qid, text) for qid, text in data.queries.items())
        name = directory.resolve().name
        return data.corpus, [Dataset(name, queries, data.qrels, {})]
    folder = settings.datasets if directory is None else directory
    corpus = load_corpus(settings.corpus)
    validation = validate_datasets([folder], corpus=corpus, min_fixtures=0, min_human=0)
    if validation.problems:
        raise InvalidDatasets(
            "\n".join(
                str(InputError(p.message, file=p.file, line=p.line)) for p in validation.problems
            )
        )
    datasets = []
    for path, fixtures in sorted(validation.datasets.items()):
        queries = tuple(
            QuerySpec(lf.fixture.query_id, lf.fixture.query, lf.fixture.filter_tags())
            for lf in fixtures
        )
        qrels = {
            lf.fixture.query_id: lf.fixture.grades()
            for lf in fixtures
            if not lf.fixture.expect_empty
        }
        types = {lf.fixture.query_id: lf.fixture.query_type or NO_QUERY_TYPE for lf in fixtures}
        if all(t == NO_QUERY_TYPE for t in types.values()):
            types = {}
        datasets.append(Dataset(path.name, queries, qrels, types))
    return corpus, datasets


def _compare(
    settings: RunSettings,
    specs: Sequence[SideSpec],
    corpus: Corpus,
    datasets: Sequence[Dataset],
    *,
    use_cache: bool,
    anthropic_api_key: str | None,
) -> tuple[list[DatasetChallengers], PerQuery]:
    """The tables, and dataset -> side -> query id -> metric -> value (for ``--json``)."""
    tables: list[DatasetChallengers] = []
    per_query: PerQuery = {}
    with RetrieverPool(
        settings.retrievers,
        corpus,
        interactive=False,
        log=stderr_log,
        cache_dir=settings.cache_dir,
        anthropic_api_key=anthropic_api_key,
    ) as pool:
        for dataset in datasets:
            scored = [_side(pool, spec, dataset, settings, use_cache=use_cache) for spec in specs]
            per_query[dataset.name] = {
                side.name: {qid: dict(values) for qid, values in side.scores.metrics.items()}
                for side in scored
                if side.scores is not None
            }
            reference = scored[0]
            if reference.scores is None:
                raise RetrievalEvalError(
                    f"the reference {reference.name!r} failed on {dataset.name}: "
                    f"{reference.warning}"
                )
            others = scored[1:]
            tables.append(
                compare_challengers(
                    dataset.name,
                    reference.scores,
                    others,
                    measures=settings.measures,
                    seed=settings.seed,
                )
            )
            groups = sorted(set(dataset.query_types.values()))
            # One group is every query again: the table above.
            for group in groups if len(groups) > 1 else []:
                ids = {qid for qid, t in dataset.query_types.items() if t == group}
                tables.append(
                    compare_challengers(
                        dataset.name,
                        reference.scores,
                        others,
                        measures=settings.measures,
                        seed=settings.seed,
                        group=group,
                        only=ids,
                    )
                )
    # The reference row shows the side's name, as every other row does.
    named = [table.model_copy(update={"reference": specs[0].name}) for table in tables]
    return named, per_query


def _side(
    pool: RetrieverPool, spec: SideSpec, dataset: Dataset, settings: RunSettings, *, use_cache: bool
) -> Side:
    """One side's scores on one dataset, or why it has none (a failing side is reported on
    its row, as a failing challenger is)."""
    if spec.unavailable is not None:
        return Side(spec.name, spec.retriever, None, spec.unavailable)
    try:
        timed = _retrieve(pool, spec, dataset, settings, use_cache=use_cache)
    except Exception as error:  # reported on its row
        message = error.message if isinstance(error, RetrievalEvalError) else str(error)
        stderr_log(f"warning: {spec.name} on {dataset.name}: {message}")
        return Side(spec.name, spec.retriever, None, message or type(error).__name__)
    rankings = {t.query_id: [hit.doc_id for hit in t.result.hits] for t in timed}
    per_measure = score_queries(dataset.qrels, rankings, list(settings.measures))
    metrics = {
        qid: {m: per_measure[m].get(qid, 0.0) for m in settings.measures} for qid in dataset.qrels
    }
    scores = Scores(
        retriever=spec.retriever,
        config=json.loads(own_settings(spec.retriever, spec.config)),
        metrics=metrics,
        latency_ms={t.query_id: t.latency_s * 1000.0 for t in timed},
        cost_usd={t.query_id: t.result.cost_usd for t in timed},
    )
    return Side(spec.name, spec.retriever, scores)


def _retrieve(
    pool: RetrieverPool, spec: SideSpec, dataset: Dataset, settings: RunSettings, *, use_cache: bool
) -> list[TimedResult]:
    key = run_key(
        spec.retriever,
        spec.config,
        corpus_fingerprint=pool.corpus_fingerprint,
        queries=dataset.queries,
        k=settings.k,
    )
    if use_cache and key is not None:
        cached = read_run(settings.cache_dir, key)
        if cached is not None:
            stderr_log(f"{spec.name} on {dataset.name}: {len(cached)} queries from the run cache")
            return cached
    retriever, _ = pool.get(spec.retriever, spec.config)
    try:
        timed = run_queries(retriever, dataset.queries, settings.k)
    except RetrievalEvalError:
        raise
    except Exception as error:
        raise ConfigError(f"retriever {spec.name!r} failed: {error}") from error
    stderr_log(f"{spec.name} on {dataset.name}: {len(timed)} queries retrieved")
    if use_cache and key is not None:
        write_run(settings.cache_dir, key, timed)
    return timed
