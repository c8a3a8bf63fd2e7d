"""``retrieval-eval validate``: check golden datasets, optionally against a corpus."""

from __future__ import annotations

import os
from pathlib import Path

import click

from retrieval_eval.errors import shown_path
from retrieval_eval.load.corpus import load_corpus
from retrieval_eval.load.documents import Corpus
from retrieval_eval.load.input_files import reading_within
from retrieval_eval.settings import find_config_file, read_settings
from retrieval_eval.validate import validate_datasets
from retrieval_eval.vocabulary import ExitCode

_SHOWN_EMPTY_IDS = 10


@click.command("validate")
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option(
    "--corpus",
    "corpus_path",
    type=click.Path(path_type=Path),
    help="Also check expected ids and filter tags against this corpus "
    "(Markdown folder, .jsonl, BEIR folder or Bear database).",
)
@click.option(
    "--min-fixtures",
    type=click.IntRange(min=0),
    default=20,
    show_default=True,
    help="Fewest valid fixtures a file may hold.",
)
@click.option(
    "--min-human",
    type=click.IntRange(min=0),
    default=10,
    show_default=True,
    help="Fewest human-annotated fixtures a file may hold.",
)
def validate(
    paths: tuple[Path, ...], corpus_path: Path | None, min_fixtures: int, min_human: int
) -> int:
    """Check dataset files (or folders holding semantic/keyword/hybrid.jsonl).

    Prints every problem as FILE:LINE: message. Exit 0 when valid, 1 when a problem
    is found, 2 when a path is missing or unreadable. Never modifies a file.
    """
    github_annotations = os.environ.get("GITHUB_ACTIONS") == "true"
    if corpus_path is None:
        corpus_path = configured_corpus(Path.cwd())
    return run_validate(
        list(paths),
        corpus_path=corpus_path,
        min_fixtures=min_fixtures,
        min_human=min_human,
        github_annotations=github_annotations,
    )


def run_validate(
    paths: list[Path],
    *,
    corpus_path: Path | None,
    min_fixtures: int,
    min_human: int,
    github_annotations: bool,
) -> int:
    # The paths named on the command line (and the working directory) are where files may
    # resolve to: a symlinked note pointing anywhere else is refused.
    named = [Path.cwd(), *paths, *([corpus_path] if corpus_path is not None else [])]
    with reading_within(named):
        corpus = load_corpus(corpus_path) if corpus_path is not None else None
        if corpus is not None:
            _warn_about_empty_documents(corpus)
        report = validate_datasets(
            paths,
            corpus=corpus,
            min_fixtures=min_fixtures,
            min_human=min_human,
            keep_fixtures=False,
        )
    for ignored in report.ignored:
        click.echo(f"note: {ignored}: not a dataset file name, not validated", err=True)
    for problem in report.problems:
        click.echo(str(problem))
        if github_annotations:
            click.echo(problem.github_annotation())
    click.echo(report.summary(), err=True)
    return int(ExitCode.FAILED if report.problems else ExitCode.OK)


def configured_corpus(workdir: Path) -> Path | None:
    """The corpus the configuration file names, as `run` reads it: without `--corpus`, the
    ids are checked against it, so a misspelt id fails here and not in the first run.
    None when there is no configuration file or its corpus does not exist (yet)."""
    if find_config_file(workdir) is None:
        return None
    corpus = read_settings(workdir=workdir, config_file=None, overrides={}).corpus
    if not corpus.exists():
        click.echo(
            f"note: the configured corpus {shown_path(corpus)} does not exist; "
            "expected ids are not checked",
            err=True,
        )
        return None
    shown = shown_path(corpus)  # relative to here when inside: problems name it so
    click.echo(
        f"checking expected ids against the configured corpus {shown} (--corpus to name another)",
        err=True,
    )
    return Path(shown)


def _warn_about_empty_documents(corpus: Corpus) -> None:
    skipped = corpus.skipped_empty
    if not skipped:
        return
    shown = ", ".join(skipped[:_SHOWN_EMPTY_IDS]) + (
        ", ..." if len(skipped) > _SHOWN_EMPTY_IDS else ""
    )
    noun = "document" if len(skipped) == 1 else "documents"
    click.echo(
        f"warning: {corpus.location}: skipped {len(skipped)} empty {noun}: {shown}", err=True
    )
