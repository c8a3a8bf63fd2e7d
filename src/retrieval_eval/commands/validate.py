"""``retrieval-eval validate``: check golden datasets, optionally against a corpus."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import click

from retrieval_eval.config.flags import overrides_from_flags, settings_flags
from retrieval_eval.load.corpus import load_corpus
from retrieval_eval.load.documents import Corpus
from retrieval_eval.load.input_files import reading_within
from retrieval_eval.settings import RunSettings, read_settings
from retrieval_eval.trust.redaction import raw_stdout
from retrieval_eval.validate import validate_datasets
from retrieval_eval.vocabulary import ExitCode

_SHOWN_EMPTY_IDS = 10


# The settings `validate` takes flags for; the rest of what it checks comes from the
# configuration file, as for every other command.
VALIDATE_FLAGS = ("min_fixtures", "min_human")


@click.command("validate")
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.option(
    "--config",
    "config_file",
    type=click.Path(path_type=Path),
    help="Config file. Default: retrieval-eval.toml, else [tool.retrieval-eval] in pyproject.toml.",
)
@click.option(
    "--corpus",
    "corpus_path",
    type=click.Path(path_type=Path),
    help="Also check expected ids and filter tags against this corpus "
    "(Markdown folder, .jsonl, BEIR folder or Bear database).",
)
@settings_flags(VALIDATE_FLAGS)
def validate(
    paths: tuple[Path, ...], config_file: Path | None, corpus_path: Path | None, **flags: Any
) -> int:
    """Check dataset files (or folders holding semantic/keyword/hybrid.jsonl); with no
    PATHS, the configured `datasets` folder.

    Prints every problem as FILE:LINE: message. Exit 0 when valid, 1 when a problem
    is found, 2 when a path is missing or unreadable. Never modifies a file.
    """
    github_annotations = os.environ.get("GITHUB_ACTIONS") == "true"
    # Read, not prepared: validate starts no retriever and resolves no variable the
    # settings name, so a service's unset token is no reason to refuse checking a file.
    settings = read_settings(
        workdir=Path.cwd(),
        config_file=config_file,
        overrides=overrides_from_flags(flags, VALIDATE_FLAGS),
    )
    return run_validate(
        list(paths) or [settings.datasets],
        corpus_path=corpus_path,
        min_fixtures=settings.min_fixtures,
        min_human=settings.min_human,
        github_annotations=github_annotations,
        roots=settings.input_roots() or (),
        settings=settings,
    )


def run_validate(
    paths: list[Path],
    *,
    corpus_path: Path | None,
    min_fixtures: int,
    min_human: int,
    github_annotations: bool,
    roots: Sequence[Path] = (),
    settings: RunSettings | None = None,
) -> int:
    # The repository, the configured outside roots and the paths named on the command line
    # are where files may resolve to: a symlinked note pointing anywhere else is refused.
    named = [Path.cwd(), *roots, *paths, *([corpus_path] if corpus_path is not None else [])]
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
    _say_resolution([path.name for path in report.datasets], settings or RunSettings())
    return int(ExitCode.OK)


def _say_resolution(names: list[str], settings: RunSettings) -> None:
    """What each dataset can resolve under the configured policy, from the per-query
    spread the configured baseline recorded (when there is one)."""
    from retrieval_eval.compare.baseline import load_baseline
    from retrieval_eval.compare.policy import gate_policy
    from retrieval_eval.errors import RetrievalEvalError
    from retrieval_eval.render.terminal import baseline_resolution_lines

    try:
        baseline = load_baseline(settings.baseline)
    except RetrievalEvalError:
        baseline = None  # the run reports a broken baseline; here it only means no spread
    for line in baseline_resolution_lines(baseline, gate_policy(settings), names):
        click.echo(line, err=True)


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
