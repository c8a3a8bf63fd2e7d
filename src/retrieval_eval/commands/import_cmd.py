"""``retrieval-eval import``: turn a public benchmark (``beir``) or a log of the queries
people sent (``queries``) into corpus and dataset files
(``retrieval_eval.usecases.imports``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

import click

from retrieval_eval.author.pii import redaction_patterns
from retrieval_eval.config.flags import (
    config_option,
    overrides_from_flags,
    settings_flags,
    typed_paths,
)
from retrieval_eval.load.fixtures import RETRIEVAL_TYPES, RetrievalType
from retrieval_eval.prepare import prepared_run
from retrieval_eval.retrieval.registry import RETRIEVER_NAMES
from retrieval_eval.usecases.imports import QueryImport, import_beir_folder, import_queries
from retrieval_eval.vocabulary import ExitCode


@click.group("import")
def import_group() -> None:
    """Convert public benchmarks or query logs into golden datasets."""


@import_group.command("beir")
@click.argument("directory", type=click.Path(path_type=Path))
@click.option(
    "--split", default="test", show_default=True, help="Which qrels/<split>.tsv to import."
)
@click.option(
    "--out",
    "out_dir",
    required=True,
    type=click.Path(path_type=Path),
    help="Folder to write documents.jsonl and the dataset file into.",
)
@click.option(
    "--retrieval-type",
    type=click.Choice(RETRIEVAL_TYPES),
    default="hybrid",
    show_default=True,
    help="Dataset file (and retrieval_type) the queries go to.",
)
@click.option("--force", is_flag=True, help="Overwrite existing output files.")
def beir(directory: Path, split: str, out_dir: Path, retrieval_type: str, force: bool) -> int:
    """Convert the BEIR folder DIRECTORY into OUT/documents.jsonl and OUT/<retrieval-type>.jsonl.

    Official qrels become human-annotated fixtures; graded judgments become `relevance`.
    """
    result = import_beir_folder(
        directory,
        out_dir,
        split=split,
        retrieval_type=cast(RetrievalType, retrieval_type),
        force=force,
    )
    click.echo(f"wrote {result.corpus_file} ({result.documents:,} documents)")
    counts = f"{result.fixtures:,} fixtures, {result.judgments:,} judgments"
    click.echo(f"wrote {result.dataset_file} ({counts})")
    if result.skipped_queries:
        click.echo(
            f"skipped {_queries(len(result.skipped_queries))} with no relevant document "
            f"in split {split!r}",
            err=True,
        )
    click.echo(
        f"check it: retrieval-eval validate {result.dataset_file} --corpus {result.corpus_file}",
        err=True,
    )
    return int(ExitCode.OK)


def _queries(count: int) -> str:
    return "1 query" if count == 1 else f"{count:,} queries"


@import_group.command("queries")
@click.argument("log_file", metavar="FILE", type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--format",
    "log_format_name",
    type=click.Choice(["jsonl", "csv"]),
    help="The log's format. Default: from the file name (.jsonl, .csv).",
)
@click.option(
    "--sample",
    type=click.IntRange(min=1),
    help="How many distinct queries to keep, drawn by frequency. Default: all.",
)
@click.option(
    "--stratify",
    metavar="COLUMN",
    help="A log column (field) whose values each get a share of the sample by their traffic.",
)
@click.option("--seed", type=int, default=0, show_default=True, help="Which queries are drawn.")
@click.option(
    "--redact",
    "redact_flag",
    is_flag=True,
    help="Replace emails, URLs, IP addresses and phone or other long numbers with "
    "placeholders before anything is written or searched.",
)
@click.option(
    "--redact-pattern",
    "redact_patterns",
    multiple=True,
    metavar="REGEX",
    help="One more pattern to redact (with --redact); may be repeated.",
)
@click.option(
    "--retrieval-type",
    type=click.Choice(RETRIEVAL_TYPES),
    default="hybrid",
    show_default=True,
    help="The dataset file (and retrieval_type) the candidates are written for.",
)
@click.option(
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Where the candidate fixtures go. Default: <datasets>/<retrieval-type>.jsonl.",
)
@click.option(
    "--retriever",
    "retriever_name",
    type=click.Choice(RETRIEVER_NAMES),
    help="Retriever whose top hits are suggested when a query has no click. Default: the "
    "one the config file maps the dataset file to.",
)
@click.option(
    "--top",
    type=click.IntRange(min=1, max=20),
    default=3,
    show_default=True,
    help="Top hits suggested as labels for a query nobody clicked.",
)
@config_option
@click.option("--append", is_flag=True, help="Add to the file, skipping queries already in it.")
@click.option("--force", is_flag=True, help="Replace the file.")
@settings_flags("import queries")
def queries(
    log_file: Path,
    log_format_name: str | None,
    sample: int | None,
    stratify: str | None,
    seed: int,
    redact_flag: bool,
    redact_patterns: tuple[str, ...],
    retrieval_type: str,
    out: Path | None,
    retriever_name: str | None,
    top: int,
    config_file: Path | None,
    append: bool,
    force: bool,
    **flags: Any,
) -> int:
    """Write candidate fixtures from the logged queries in FILE (JSONL or CSV).

    Fields: `query`; optional `clicked` or `cited` (document ids: a JSON list, or in CSV
    separated by "|"), `count` (times sent) and any column to --stratify by. Queries are
    grouped by their normalised text and sampled by frequency. A query's suggested labels
    are its clicked ids, else the retriever's top hits; every candidate is synthetic until
    `retrieval-eval review` accepts it.
    """
    if force and append:
        raise click.UsageError("--force replaces the file and --append adds to it: pick one")
    if redact_patterns and not redact_flag:
        raise click.UsageError("--redact-pattern needs --redact")
    try:
        patterns = redaction_patterns(redact_patterns) if redact_flag else ()
    except ValueError as error:
        raise click.UsageError(str(error)) from None
    request = QueryImport(
        log_file=log_file,
        log_format=log_format_name,
        sample=sample,
        stratify=stratify,
        seed=seed,
        patterns=patterns,
        retrieval_type=cast(RetrievalType, retrieval_type),
        out=out,
        retriever_name=retriever_name,
        top=top,
        append=append,
        force=force,
    )
    with prepared_run(
        workdir=Path.cwd(),
        config_file=config_file,
        overrides=overrides_from_flags(flags),
        typed_inputs=(log_file, *typed_paths(flags, "read")),
        typed_outputs=(out,) if out is not None else (),
    ) as ready:
        made = import_queries(ready.settings, request)
    click.echo(
        f"read {made.records:,} log records ({made.sent:,} queries sent, {made.distinct:,} "
        f"distinct{' new' if append else ''}); wrote {made.written:,} candidate fixtures to "
        f"{made.target} ({made.sources['clicks']} labelled by clicks, "
        f"{made.sources['retriever']} by {made.retriever}'s top {top})"
    )
    if made.skipped:
        click.echo(
            f"skipped {_queries(made.skipped)} with no click in the corpus and no hit", err=True
        )
    click.echo(
        f"next: retrieval-eval review {made.target} accepts, fixes or rejects each", err=True
    )
    return int(ExitCode.OK)
