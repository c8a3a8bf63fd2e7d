"""`retrieval-eval tune DATASET --retriever NAME --param NAME=SPEC ...`.

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

import json
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import click
import numpy as np

from retrieval_eval.commands.beir import prepared_retrievers
from retrieval_eval.commands.model import model_dir_option
from retrieval_eval.commands.progress_flag import progress_option, show_progress
from retrieval_eval.compare.baseline import models_recorded_at
from retrieval_eval.compare.dense_model import choose_run_model
from retrieval_eval.errors import ConfigError
from retrieval_eval.fileio import atomic_write_text
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
    TUNED_RETRIEVERS,
    expand_grid,
    parse_param,
    settings_label,
    toml_block,
    tuned_settings,
)
from retrieval_eval.score.cross_validation import CrossValidation, cross_validate
from retrieval_eval.score.measure_names import parse_measure
from retrieval_eval.score.query_scores import score_queries
from retrieval_eval.validate import validate_datasets
from retrieval_eval.vocabulary import ExitCode

_PATH = click.Path(path_type=Path)


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
    model_dir: Path | None,
    cache_dir: Path | None,
) -> Iterator[TuneData]:
    """A BEIR folder; retriever settings from ``--config``, else the built-in ones."""
    with prepared_retrievers(config_file, model_dir=model_dir, cache_dir=cache_dir) as ready:
        data = load_beir(directory, split)
        queries = [QuerySpec(query_id, text) for query_id, text in data.queries.items()]
        choice = choose_dense_model(ready.retrievers, documents=len(data.corpus.documents))
        retrievers = with_dense_model(ready.retrievers, choice.model)
        yield TuneData(data.corpus, queries, data.qrels, retrievers, ready.pace)


@contextmanager
def dataset_data(
    file: Path, config_file: Path | None, model_dir: Path | None, cache_dir: Path | None
) -> Iterator[TuneData | None]:
    """A golden dataset file, read as `run` reads it: the configuration (``--config``,
    else the one `run` finds) gives the corpus and the retrievers, the flags override it
    as they do for `run`, and the file is validated against the corpus. Invalid: the
    problems are printed and None is given."""
    overrides = {
        name: value
        for name, value in (("cache_dir", cache_dir), ("model_dir", model_dir))
        if value is not None
    }
    with prepared_run(
        workdir=Path.cwd(),
        config_file=config_file,
        overrides=overrides,
        typed_inputs=(file, *(path for path in (model_dir,) if path is not None)),
        typed_outputs=tuple(path for path in (cache_dir,) if path is not None),
    ) as ready:
        corpus = load_corpus(ready.settings.corpus)
        settings, _ = choose_run_model(
            ready.settings, corpus, models_recorded_at(ready.settings.baseline), stderr_log
        )
        report = validate_datasets(
            [file], corpus=corpus, min_fixtures=settings.min_fixtures, min_human=settings.min_human
        )
        if not report.ok:
            for problem in report.problems:
                click.echo(str(problem), err=True)
            yield None
            return
        fixtures = [located.fixture for located in next(iter(report.datasets.values()), [])]
        queries = [QuerySpec(f.query_id, f.query, f.filter_tags()) for f in fixtures]
        qrels = {f.query_id: f.grades() for f in fixtures}
        yield TuneData(corpus, queries, qrels, settings.retrievers, settings.progress.pace())


@click.command("tune")
@click.argument("dataset", type=click.Path(exists=True, path_type=Path))
@click.option(
    "--retriever",
    "retriever_name",
    type=click.Choice(TUNED_RETRIEVERS),
    default="hybrid",
    show_default=True,
    help="Retriever whose settings are searched.",
)
@click.option(
    "--param",
    "params",
    multiple=True,
    required=True,
    help="NAME=START:STOP:STEP or NAME=A,B,C. hybrid: fusion, alpha, normalisation, rrf_k, "
    "depth, weights.dense, weights.bm25; bm25: k1, b, stopwords (lucene, en-179, none), "
    "stemming (true, false), chunk_tokens, chunk_overlap; dense: chunk_tokens, "
    "chunk_overlap. Repeat for a grid.",
)
@click.option("--metric", default="ndcg@10", show_default=True, help="Measure to maximise.")
@click.option("--folds", type=click.IntRange(min=2), default=5, show_default=True)
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the fold split.")
@click.option(
    "--split", default="test", show_default=True, help="BEIR folder: qrels/<split>.tsv to use."
)
@click.option("--json", "json_path", type=_PATH, help="Write every point's score here.")
@click.option(
    "--config",
    "config_file",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Start from this file's [retrievers] tables. Default: for a BEIR folder the "
    "built-in settings; for a dataset file the config `run` finds, which also names the corpus.",
)
@model_dir_option("--model-dir", help="Embedding model folder (dense, hybrid).")
@click.option(
    "--cache-dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="Cache folder, as for `run` (embeddings/ inside): a second tune on the same corpus "
    "embeds nothing. Default: the config's cache_dir, else .retrieval-eval-cache",
)
@progress_option
def tune(
    dataset: Path,
    retriever_name: str,
    params: tuple[str, ...],
    metric: str,
    folds: int,
    seed: int,
    split: str,
    json_path: Path | None,
    config_file: Path | None,
    model_dir: Path | None,
    cache_dir: Path | None,
    progress: bool | None,
) -> int:
    """Cross-validated grid search of one retriever's settings (hybrid's fusion; bm25's
    and dense's indexing) on DATASET: a BEIR folder, or a golden dataset file (*.jsonl)
    over the configuration's corpus."""
    measure = parse_measure(metric).name
    params_parsed = [parse_param(text, retriever_name) for text in params]
    opened: AbstractContextManager[TuneData | None]
    if dataset.is_dir():
        source = f"{dataset} (split {split})"
        opened = beir_data(dataset, split, config_file, model_dir, cache_dir)
    else:
        source = str(dataset)
        opened = dataset_data(dataset, config_file, model_dir, cache_dir)
    with opened as data:
        if data is None:
            return ExitCode.FAILED
        return _tune(
            data,
            source,
            retriever_name,
            params_parsed,
            measure,
            folds,
            seed,
            split,
            json_path,
            dataset,
            interactive=show_progress(progress),
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
    json_path: Path | None,
    dataset: Path,
    *,
    interactive: bool,
) -> int:
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
            json_path,
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
    _print_choice(lines, result, grid, best, "hybrid")
    if json_path is not None:
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
        atomic_write_text(json_path, json.dumps(summary, indent=2) + "\n")
    return ExitCode.OK


def _tune_indexing(
    data: TuneData,
    source: str,
    retriever_name: str,
    grid: list[Any],
    measure: str,
    folds: int,
    seed: int,
    split: str,
    json_path: Path | None,
    dataset: Path,
    *,
    judged: list[str],
    interactive: bool,
) -> int:
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
    _print_choice(lines, result, grid, best, retriever_name)
    if json_path is not None:
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
        atomic_write_text(json_path, json.dumps(summary, indent=2) + "\n")
    return ExitCode.OK


def _print_choice(
    lines: list[str], result: CrossValidation, grid: list[Any], best: Any, retriever_name: str
) -> None:
    """``lines``, then the in-sample best, the cross-validated score with each fold's pick,
    the overfitting warning when it applies, and the table to paste."""
    lines += [
        f"{'in-sample best':<16} {result.in_sample_mean:.4f}  {settings_label(best)}",
        f"{'cross-validated':<16} {result.mean:.4f}  95% CI [{result.ci[0]:.4f}, "
        f"{result.ci[1]:.4f}]  (held-out folds; in-sample gap {result.gap:+.4f})",
        *(
            f"  fold {fold + 1}: {mean:.4f} held out, picked {settings_label(grid[pick])}"
            for fold, (pick, mean) in enumerate(zip(result.picks, result.fold_means, strict=True))
        ),
    ]
    click.echo("\n".join(lines))
    if result.overfit:
        click.echo(
            f"warning: the in-sample best beats the cross-validated score by {result.gap:.4f}, "
            f"more than the 95% CI half-width ({result.half_width:.4f}): the grid is fitting "
            "these queries; expect the cross-validated score on new ones",
            err=True,
        )
    click.echo("\nPaste into retrieval-eval.toml:\n")
    click.echo(toml_block(best, retriever_name), nl=False)
