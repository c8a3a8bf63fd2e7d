"""``retrieval-eval import``: turn a public benchmark (``beir``) or a log of the queries
people sent (``queries``) into corpus and dataset files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import cast

import click

from retrieval_eval.author.pii import redact, redaction_patterns
from retrieval_eval.author.query_import import (
    candidate_fixture,
    group_queries,
    normalised,
    sample_groups,
)
from retrieval_eval.compare.dense_model import retrievers_for
from retrieval_eval.errors import InputError
from retrieval_eval.fileio import atomic_write_text
from retrieval_eval.load.beir import load_beir
from retrieval_eval.load.beir_import import import_beir
from retrieval_eval.load.corpus import load_corpus
from retrieval_eval.load.fixtures import RETRIEVAL_TYPES, LocatedFixture, RetrievalType
from retrieval_eval.load.query_log import log_format, read_query_log
from retrieval_eval.prepare import prepared_run
from retrieval_eval.retrieval.registry import RETRIEVER_NAMES, build_retriever, close_retriever
from retrieval_eval.validate.fixture_file import read_fixture_file
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
    data = load_beir(directory, split)
    result = import_beir(
        data, out_dir, retrieval_type=cast(RetrievalType, retrieval_type), overwrite=force
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
@click.option("--corpus", "corpus_path", type=click.Path(path_type=Path), help="Corpus path.")
@click.option("--config", "config_file", type=click.Path(path_type=Path), help="Config file.")
@click.option("--append", is_flag=True, help="Add to the file, skipping queries already in it.")
@click.option("--force", is_flag=True, help="Replace the file.")
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
    corpus_path: Path | None,
    config_file: Path | None,
    append: bool,
    force: bool,
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
    overrides: dict[str, object] = {"corpus": corpus_path} if corpus_path is not None else {}
    typed = (log_file, *([corpus_path] if corpus_path is not None else []))
    with prepared_run(
        workdir=Path.cwd(),
        config_file=config_file,
        overrides=overrides,
        typed_inputs=typed,
        typed_outputs=(out,) if out is not None else (),
    ) as ready:
        settings = ready.settings
        target = out or settings.datasets / f"{retrieval_type}.jsonl"
        if target.exists() and not (force or append):
            raise InputError(
                "exists; pass --append to add to it, or --force to replace it", file=target
            )
        logged = read_query_log(log_file, log_format(log_file, log_format_name))
        # Redacted first: nothing below (the retriever, its caches, the file) sees the original.
        records = [
            (
                redact(q.query, patterns) if patterns else q.query,
                q.clicked,
                q.count,
                {k: redact(v, patterns) for k, v in q.fields.items()} if patterns else q.fields,
            )
            for q in logged
        ]
        if stratify is not None and not any(stratify in fields for *_, fields in records):
            raise InputError(f"no record has a {stratify!r} field to stratify by", file=log_file)
        groups = group_queries(records, stratify)
        existing = _existing_queries(target) if append else set()
        groups = [g for g in groups if g.key not in existing]
        chosen = sample_groups(groups, sample, seed)
        corpus = load_corpus(settings.corpus)
        known = {doc.id for doc in corpus.documents}
        needs_retriever = any(not any(c in known for c in g.clicks) for g in chosen)
        name = retriever_name or settings.retriever_for(target.name) or "hybrid"
        retriever = (
            build_retriever(name, retrievers_for(settings, corpus)) if needs_retriever else None
        )
        lines: list[str] = []
        sources = {"clicks": 0, "retriever": 0}
        skipped = 0
        try:
            if retriever is not None:
                click.echo(f"indexing {len(corpus.documents)} documents for {name}", err=True)
                retriever.index(corpus)
            for group in chosen:
                made = candidate_fixture(
                    group,
                    retrieval_type=retrieval_type,
                    known_ids=known.__contains__,
                    top_hits=lambda text: (
                        [hit.doc_id for hit in retriever.search(text, top, ()).hits]
                        if retriever is not None
                        else []
                    ),
                    stratify=stratify,
                )
                if made is None:
                    skipped += 1
                    continue
                record, source = made
                sources[source] += 1
                lines.append(json.dumps(record, ensure_ascii=False))
        finally:
            if retriever is not None:
                close_retriever(retriever)
        kept = target.read_text(encoding="utf-8") if append and target.exists() else ""
        if kept and not kept.endswith("\n"):
            kept += "\n"
        atomic_write_text(target, kept + "".join(line + "\n" for line in lines))
        total = sum(q.count for q in logged)
        click.echo(
            f"read {len(logged):,} log records ({total:,} queries sent, {len(groups):,} "
            f"distinct{' new' if append else ''}); wrote {len(lines):,} candidate fixtures to "
            f"{target} ({sources['clicks']} labelled by clicks, {sources['retriever']} by "
            f"{name}'s top {top})"
        )
        if skipped:
            click.echo(
                f"skipped {_queries(skipped)} with no click in the corpus and no hit", err=True
            )
        click.echo(f"next: retrieval-eval review {target} accepts, fixes or rejects each", err=True)
        return int(ExitCode.OK)


def _existing_queries(path: Path) -> set[str]:
    """The normalised texts of the queries already in ``path`` (for --append)."""
    if not path.exists():
        return set()
    found = set()
    for item in read_fixture_file(path):
        if isinstance(item, LocatedFixture):
            found.add(normalised(item.fixture.query))
        else:
            raise InputError(f"{item.message}; fix it before --append", file=path, line=item.line)
    return found
