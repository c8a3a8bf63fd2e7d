"""`retrieval-eval tune DATASET --retriever NAME --param NAME=SPEC ...`: a cross-validated
grid search of one retriever's settings (``retrieval_eval.usecases.tune``).

The command parses the flags, prints the search, the cross-validated choice and the
``[retrievers.NAME]`` table to paste into ``retrieval-eval.toml``, and writes every point's
score where ``--json`` asks.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from retrieval_eval.commands.progress_flag import progress_option, show_progress
from retrieval_eval.config.flags import overrides_from_flags, settings_flags, typed_paths
from retrieval_eval.fileio import atomic_write_text
from retrieval_eval.retrieval.tune.grid import (
    TUNED_RETRIEVERS,
    parse_param,
    settings_label,
    toml_block,
)
from retrieval_eval.score.measure_names import parse_measure
from retrieval_eval.usecases.tune import FlagSettings, Tuned, search_grid, tune_data
from retrieval_eval.vocabulary import ExitCode

_PATH = click.Path(path_type=Path)


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
@settings_flags("tune")
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
    progress: bool | None,
    **flags: Any,
) -> int:
    """Cross-validated grid search of one retriever's settings (hybrid's fusion; bm25's
    and dense's indexing) on DATASET: a BEIR folder, or a golden dataset file (*.jsonl)
    over the configuration's corpus."""
    measure = parse_measure(metric).name
    params_parsed = [parse_param(text, retriever_name) for text in params]
    opened = tune_data(
        dataset,
        split=split,
        config_file=config_file,
        flags=FlagSettings(
            overrides_from_flags(flags),
            typed_paths(flags, "read"),
            typed_paths(flags, "written", "atomic"),
        ),
    )
    with opened as data:
        if isinstance(data, list):
            for problem in data:
                click.echo(str(problem), err=True)
            return ExitCode.FAILED
        tuned = search_grid(
            data,
            dataset,
            retriever_name,
            params_parsed,
            measure=measure,
            folds=folds,
            seed=seed,
            split=split,
            interactive=show_progress(progress),
        )
    _print_choice(tuned)
    if json_path is not None:
        atomic_write_text(json_path, json.dumps(tuned.summary, indent=2) + "\n")
    return ExitCode.OK


def _print_choice(tuned: Tuned) -> None:
    """The search's lines, then the in-sample best, the cross-validated score with each
    fold's pick, the overfitting warning when it applies, and the table to paste."""
    result, grid = tuned.result, tuned.grid
    lines = [
        *tuned.lines,
        f"{'in-sample best':<16} {result.in_sample_mean:.4f}  {settings_label(tuned.best)}",
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
    click.echo(toml_block(tuned.best, tuned.retriever), nl=False)
