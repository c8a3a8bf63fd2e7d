"""``retrieval-eval corpus ids``: the document ids a fixture's `expected_top_k_ids` may name."""

from __future__ import annotations

from pathlib import Path

import click

from retrieval_eval.config.flags import config_option
from retrieval_eval.load.corpus import load_corpus
from retrieval_eval.load.input_files import reading_within
from retrieval_eval.prepare import within_roots
from retrieval_eval.settings import read_settings
from retrieval_eval.vocabulary import ExitCode


@click.group("corpus")
def corpus_group() -> None:
    """Look inside the corpus."""


@corpus_group.command("ids")
@click.argument("path", required=False, type=click.Path(path_type=Path))
@click.option("--titles", is_flag=True, help="Print each id's title after a tab.")
@config_option
def ids(path: Path | None, titles: bool, config_file: Path | None) -> int:
    """Print every document id of the corpus, one a line, sorted, as fixtures name them.

    PATH is a Markdown folder, a .jsonl file, a BEIR folder or a Bear database; without it,
    the corpus the configuration names (as `run` reads it). Empty documents, which no run
    indexes, are left out and counted on stderr.
    """
    if path is None:
        settings = read_settings(workdir=Path.cwd(), config_file=config_file, overrides={})
        with within_roots(settings):
            corpus = load_corpus(settings.corpus)
    else:
        # A path typed on the command line is read as it is, like `validate --corpus`.
        with reading_within([Path.cwd(), path]):
            corpus = load_corpus(path)
    for document in sorted(corpus.documents, key=lambda d: d.id):
        click.echo(f"{document.id}\t{_one_line(document.title)}" if titles else document.id)
    skipped = len(corpus.skipped_empty)
    note = f"; {skipped} empty left out (a run skips them)" if skipped else ""
    click.echo(f"{len(corpus.documents)} documents in {corpus.location}{note}", err=True)
    return int(ExitCode.OK)


def _one_line(title: str) -> str:
    return " ".join(title.split())
