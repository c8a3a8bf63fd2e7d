"""``retrieval-eval validate``: check golden datasets, optionally against a corpus."""

from __future__ import annotations

import os
from pathlib import Path

import click

from retrieval_eval.load.corpus import load_corpus
from retrieval_eval.load.documents import Corpus
from retrieval_eval.load.input_files import reading_within
from retrieval_eval.trust.redaction import raw_stdout
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
            # The real stdout: inside a workflow the guarded one defuses every command.
            click.echo(problem.github_annotation(), file=raw_stdout())
    files = len(report.datasets)
    if report.problems:
        noun = "problem" if len(report.problems) == 1 else "problems"
        click.echo(f"{len(report.problems)} {noun} in {_files(files)}", err=True)
        return int(ExitCode.FAILED)
    click.echo(f"ok: {_files(files)}, {report.fixture_count} fixtures", err=True)
    return int(ExitCode.OK)


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


def _files(count: int) -> str:
    return f"{count} file" if count == 1 else f"{count} files"
