"""``retrieval-eval validate``: check golden datasets, optionally against a corpus."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import click

from retrieval_eval.config.flags import config_option, overrides_from_flags, settings_flags
from retrieval_eval.errors import shown_path
from retrieval_eval.load.corpus import load_corpus
from retrieval_eval.load.documents import Corpus
from retrieval_eval.load.input_files import reading_within
from retrieval_eval.settings import RunSettings, find_config_file, read_settings
from retrieval_eval.trust.redaction import raw_stdout
from retrieval_eval.validate import validate_datasets
from retrieval_eval.vocabulary import ExitCode

_SHOWN_EMPTY_IDS = 10


@click.command("validate")
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@config_option
@click.option(
    "--corpus",
    "corpus_path",
    type=click.Path(path_type=Path),
    help="Also check expected ids and filter tags against this corpus "
    "(Markdown folder, .jsonl, BEIR folder or Bear database).",
)
@settings_flags("validate")
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
        overrides=overrides_from_flags(flags),
    )
    if corpus_path is None:
        configured = config_file is not None or find_config_file(Path.cwd()) is not None
        corpus_path = configured_corpus(settings.corpus, configured=configured)
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
    click.echo(report.summary(), err=True)
    if report.problems:
        return int(ExitCode.FAILED)
    _say_resolution([path.name for path in report.datasets], settings or RunSettings())
    return int(ExitCode.OK)


def configured_corpus(corpus: Path, *, configured: bool) -> Path | None:
    """The corpus `run` would read (the configuration's, else the default): without
    `--corpus`, the ids are checked against it, so a misspelt id fails here and not in the
    first run. None when it does not exist (yet), which a configuration file is told of."""
    if not corpus.exists():
        if configured:
            click.echo(
                f"note: the configured corpus {shown_path(corpus)} does not exist; "
                "expected ids are not checked",
                err=True,
            )
        return None
    shown = shown_path(corpus)  # relative to here when inside: problems name it so
    which = "configured" if configured else "default"
    click.echo(
        f"checking expected ids against the {which} corpus {shown} (--corpus to name another)",
        err=True,
    )
    return Path(shown)


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
