"""``retrieval-eval import beir``: turn a public benchmark into our corpus + dataset files."""

from __future__ import annotations

from pathlib import Path
from typing import cast

import click

from retrieval_eval.load.beir import load_beir
from retrieval_eval.load.beir_import import import_beir
from retrieval_eval.load.fixtures import RETRIEVAL_TYPES, RetrievalType
from retrieval_eval.vocabulary import ExitCode


@click.group("import")
def import_group() -> None:
    """Convert public benchmarks into golden datasets."""


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
