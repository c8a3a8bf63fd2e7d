"""A grid of one retriever's settings searched (`retrieval-eval tune`).

Searches a grid of one retriever's settings on a BEIR folder, or on a golden
dataset file evaluated against the configuration's corpus as `run` would
evaluate it, without fooling itself: the choice is judged by k-fold
cross-validation over queries (``score/cross_validation``) next to the optimistic
in-sample best. For ``hybrid`` every side is retrieved once (``cached_runs``) and
each grid point only re-fuses; for ``bm25`` and ``dense`` (indexing settings:
BM25's k1, b, stop words, stemming, chunking; dense's chunking) each point indexes
the corpus again, dense from the embedding cache where a chunk's text repeats. It
prints the ``[retrievers.NAME]`` table to paste into ``retrieval-eval.toml``.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from retrieval_eval.compare.baseline import models_recorded_at
from retrieval_eval.compare.dense_model import choose_run_model
from retrieval_eval.errors import ConfigError
from retrieval_eval.load.beir import load_beir
from retrieval_eval.load.corpus import load_corpus
from retrieval_eval.load.documents import Corpus
from retrieval_eval.prepare import prepared_run
from retrieval_eval.progress import Pace, stderr_log, step
from retrieval_eval.retrieval.config import HYBRID_SIDES, RetrieversConfig
from retrieval_eval.retrieval.defaults import choose_dense_model, with_dense_model
from retrieval_eval.retrieval.registry import build_retriever, close_retriever, hybrid_sides
from retrieval_eval.retrieval.timed import QuerySpec, index_with_progress
from retrieval_eval.retrieval.tune.cached_runs import retrieve_sides
from retrieval_eval.retrieval.tune.grid import (
    expand_grid,
    settings_label,
    tuned_settings,
)
from retrieval_eval.score.cross_validation import CrossValidation, cross_validate
from retrieval_eval.score.measure_names import parse_measure
from retrieval_eval.score.query_scores import score_queries
from retrieval_eval.usecases.beir import prepared_retrievers
from retrieval_eval.validate import Problem, validate_datasets


@dataclass(frozen=True)
class Tuned:
    """A grid search's outcome: the lines that say what was searched and how fast, the
    cross-validation, the in-sample best point, and every number for ``--json``."""

    lines: list[str]
    result: CrossValidation
    grid: list[Any]
    best: Any
    retriever: str
    summary: dict[str, Any]


@dataclass(frozen=True)
class TuneData:
    """What the grid is searched on: documents, queries with their tag filters, grades."""

    corpus: Corpus
    queries: list[QuerySpec]
    qrels: dict[str, dict[str, int]]
    retrievers: RetrieversConfig
    pace: Pace = field(default_factory=Pace)


@contextmanager
def beir_data(
    directory: Path,
    split: str,
    config_file: Path | None,
    flags: FlagSettings,
) -> Iterator[TuneData]:
    """A BEIR folder; retriever settings from ``--config``, else the built-in ones."""
    with prepared_retrievers(
        config_file, overrides=flags.overrides, typed_outputs=flags.typed_outputs
    ) as ready:
        data = load_beir(directory, split)
        queries = [QuerySpec(query_id, text) for query_id, text in data.queries.items()]
        choice = choose_dense_model(ready.retrievers, documents=len(data.corpus.documents))
        retrievers = with_dense_model(ready.retrievers, choice.model)
        yield TuneData(data.corpus, queries, data.qrels, retrievers, ready.pace)


@contextmanager
def dataset_data(
    file: Path, config_file: Path | None, flags: FlagSettings
) -> Iterator[TuneData | list[Problem]]:
    """A golden dataset file, read as `run` reads it: the configuration (``--config``,
    else the one `run` finds) gives the corpus and the retrievers, the flags override it
    as they do for `run`, and the file is validated against the corpus. Invalid: its
    problems are given instead."""
    with prepared_run(
        workdir=Path.cwd(),
        config_file=config_file,
        overrides=flags.overrides,
        typed_inputs=(file, *flags.typed_inputs),
        typed_outputs=flags.typed_outputs,
    ) as ready:
        corpus = load_corpus(ready.settings.corpus)
        settings, _ = choose_run_model(
            ready.settings, corpus, models_recorded_at(ready.settings.baseline), stderr_log
        )
        report = validate_datasets(
            [file], corpus=corpus, min_fixtures=settings.min_fixtures, min_human=settings.min_human
        )
        if not report.ok:
            yield list(report.problems)
            return
        fixtures = [located.fixture for located in next(iter(report.datasets.values()), [])]
        queries = [QuerySpec(f.query_id, f.query, f.filter_tags()) for f in fixtures]
        qrels = {f.query_id: f.grades() for f in fixtures}
        yield TuneData(corpus, queries, qrels, settings.retrievers, settings.progress.pace())


def tune_data(
    dataset: Path,
    *,
    split: str,
    config_file: Path | None,
    flags: FlagSettings,
) -> AbstractContextManager[TuneData | list[Problem]]:
    """What DATASET is: a BEIR folder (split ``split``), else a golden dataset file."""
    if dataset.is_dir():
        return beir_data(dataset, split, config_file, flags)
    return dataset_data(dataset, config_file, flags)


@dataclass(frozen=True)
class FlagSettings:
    """The settings the command's flags give (``overrides_from_flags``), and the paths of
    them typed on the command line, to read and to write."""

    overrides: Mapping[str, Any] = field(default_factory=dict)
    typed_inputs: tuple[Path, ...] = ()
    typed_outputs: tuple[Path, ...] = ()


def source_of(dataset: Path, split: str) -> str:
    """How the first line names what was searched."""
    return f"{dataset} (split {split})" if dataset.is_dir() else str(dataset)


def search_grid(
    data: TuneData,
    dataset: Path,
    retriever_name: str,
    params: list[Any],
    *,
    measure: str,
    folds: int,
    seed: int,
    split: str,
    interactive: bool,
) -> Tuned:
    """Cross-validated search of the grid ``params`` (each parsed by ``parse_param``) spans
    around the retriever's settings, judged by ``measure`` (a canonical name)."""
    return _tune(
        data,
        source_of(dataset, split),
        retriever_name,
        params,
        measure,
        folds,
        seed,
        split,
        dataset,
        interactive=interactive,
    )


def _tune(
    data: TuneData,
    source: str,
    retriever_name: str,
    params_parsed: list[Any],
    measure: str,
    folds: int,
    seed: int,
    split: str,
    dataset: Path,
    *,
    interactive: bool,
) -> Tuned:
    config = data.retrievers
    grid = expand_grid(getattr(config, retriever_name), params_parsed)
    queries = data.queries
    judged = [qid for qid, grades in data.qrels.items() if any(g >= 1 for g in grades.values())]
    if len(judged) < folds:
        raise ConfigError(f"{len(judged)} judged queries cannot be split into {folds} folds")
    if retriever_name != "hybrid":
        return _tune_indexing(
            data,
            source,
            retriever_name,
            grid,
            measure,
            folds,
            seed,
            split,
            dataset,
            judged=judged,
            interactive=interactive,
        )

    sides = hybrid_sides(config)
    try:
        index_s = {
            side: index_with_progress(
                retriever, data.corpus, interactive=interactive, log=stderr_log, pace=data.pace
            )
            for side, retriever in sides.items()
        }
        depth = max(point.depth for point in grid)
        with step(
            f"searching with {', '.join(sides)}",
            len(queries) * len(sides),
            interactive=interactive,
            log=stderr_log,
            pace=data.pace,
        ) as tracker:
            cached = retrieve_sides(sides, queries, depth, on_done=tracker.advance)
    finally:
        for retriever in sides.values():
            close_retriever(retriever)

    started = time.perf_counter()
    k = parse_measure(measure).k or depth
    scores = np.empty((len(grid), len(judged)), dtype=np.float64)
    for row, rankings in enumerate(cached.grid_rankings(grid, k)):
        per_query = score_queries(data.qrels, rankings, [measure])[measure]
        scores[row] = [per_query[qid] for qid in judged]
    search_s = time.perf_counter() - started
    # The configuration's own table, the line a default change must beat (bench/cv_defaults.py).
    current = config.hybrid
    [current_rankings] = cached.grid_rankings([current], k)
    current_per_query = score_queries(data.qrels, current_rankings, [measure])[measure]
    current_scores = np.array([current_per_query[qid] for qid in judged], dtype=np.float64)
    result = cross_validate(scores, judged, folds=folds, seed=seed)
    alone = {}
    for side in HYBRID_SIDES:
        per_query = score_queries(data.qrels, cached.side_rankings(side, k), [measure])[measure]
        alone[side] = float(np.mean([per_query[qid] for qid in judged]))

    best = grid[result.in_sample_best]
    per_point_ms = search_s * 1000 / (len(grid) * max(len(queries), 1))
    points = f"{len(grid)} grid point{'s' if len(grid) != 1 else ''}"
    lines = [
        f"tune {retriever_name} on {source}: {len(judged)} judged queries, "
        f"{points}, {measure}, {folds} folds (seed {seed})",
        "retrieved once: "
        + ", ".join(f"{side} {cached.seconds[side]:.1f} s" for side in HYBRID_SIDES)
        + f" (depth {depth}); index "
        + ", ".join(f"{side} {index_s[side]:.1f} s" for side in HYBRID_SIDES),
        f"grid: {search_s:.2f} s for {points} ({per_point_ms:.3f} ms per query "
        "per point, fusion and scoring)",
        *(f"{side + ' alone':<16} {alone[side]:.4f}" for side in HYBRID_SIDES),
    ]
    summary = {
        "dataset": str(dataset),
        "split": split if dataset.is_dir() else None,
        "metric": measure,
        "folds": folds,
        "seed": seed,
        "queries": len(judged),
        "alone": alone,
        "current": {
            "score": float(current_scores.mean()),
            "settings": current.fusion_settings(),
        },
        "in_sample": {"score": result.in_sample_mean, "settings": best.fusion_settings()},
        "cross_validated": {"mean": result.mean, "ci95": list(result.ci)},
        "overfit_warning": result.overfit,
        "folds_held_out": [
            {"settings": grid[pick].fusion_settings(), "score": mean}
            for pick, mean in zip(result.picks, result.fold_means, strict=True)
        ],
        "retrieval_s": dict(cached.seconds),
        "grid_s": search_s,
        "ms_per_query_per_point": per_point_ms,
        "points": [
            {"settings": point.fusion_settings(), "score": float(scores[row].mean())}
            for row, point in enumerate(grid)
        ],
        "per_query": {
            "queries": judged,
            "current": current_scores.tolist(),
            "points": scores.tolist(),
        },
    }
    return Tuned(lines, result, grid, best, retriever_name, summary)


def _tune_indexing(
    data: TuneData,
    source: str,
    retriever_name: str,
    grid: list[Any],
    measure: str,
    folds: int,
    seed: int,
    split: str,
    dataset: Path,
    *,
    judged: list[str],
    interactive: bool,
) -> Tuned:
    """``bm25`` or ``dense``: each point is a fresh retriever on the corpus. The
    configuration's own table is scored too, as the line to beat. ``judged``: the
    queries with a relevant document, as ``_tune`` found them."""
    # Measures without a cut-off (map, ndcg) are scored on the top 1000, as trec_eval's
    # runs usually are.
    k = parse_measure(measure).k or 1000
    current = getattr(data.retrievers, retriever_name)
    points = [*grid, current]
    scores = np.empty((len(points), len(judged)), dtype=np.float64)
    index_s = search_s = 0.0
    for row, point in enumerate(points):
        if row == len(grid) and current in grid:
            scores[row] = scores[grid.index(current)]
            continue
        retriever = build_retriever(
            retriever_name, data.retrievers.model_copy(update={retriever_name: point})
        )
        try:
            index_s += index_with_progress(
                retriever,
                data.corpus,
                interactive=interactive,
                log=stderr_log,
                pace=data.pace,
                name=f"{retriever_name} ({settings_label(point)})",
            )
            cached = retrieve_sides({retriever_name: retriever}, data.queries, k)
        finally:
            close_retriever(retriever)
        search_s += cached.seconds[retriever_name]
        rankings = cached.side_rankings(retriever_name, k)
        per_query = score_queries(data.qrels, rankings, [measure])[measure]
        scores[row] = [per_query[qid] for qid in judged]
    result = cross_validate(scores[: len(grid)], judged, folds=folds, seed=seed)
    best = grid[result.in_sample_best]
    current_score = float(scores[-1].mean())
    count = f"{len(grid)} grid point{'s' if len(grid) != 1 else ''}"
    lines = [
        f"tune {retriever_name} on {source}: {len(judged)} judged queries, "
        f"{count}, {measure}, {folds} folds (seed {seed})",
        f"index {index_s:.1f} s, search {search_s:.1f} s (each point indexed once)",
        f"{'current settings':<16} {current_score:.4f}  {settings_label(current)}",
    ]
    summary = {
        "dataset": str(dataset),
        "split": split if dataset.is_dir() else None,
        "retriever": retriever_name,
        "metric": measure,
        "folds": folds,
        "seed": seed,
        "queries": len(judged),
        "current": {"score": current_score, "settings": tuned_settings(current)},
        "in_sample": {"score": result.in_sample_mean, "settings": tuned_settings(best)},
        "cross_validated": {"mean": result.mean, "ci95": list(result.ci)},
        "overfit_warning": result.overfit,
        "folds_held_out": [
            {"settings": tuned_settings(grid[pick]), "score": mean}
            for pick, mean in zip(result.picks, result.fold_means, strict=True)
        ],
        "index_s": index_s,
        "search_s": search_s,
        "points": [
            {"settings": tuned_settings(point), "score": float(scores[row].mean())}
            for row, point in enumerate(grid)
        ],
        "per_query": {
            "queries": judged,
            "current": scores[-1].tolist(),
            "points": scores[: len(grid)].tolist(),
        },
    }
    return Tuned(lines, result, grid, best, retriever_name, summary)
