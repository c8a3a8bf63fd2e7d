"""`retrieval-eval review FILE`: accept, fix or reject synthetic fixtures one at a time."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from retrieval_eval.author.hole_review import HoleReview, candidates, read_report
from retrieval_eval.author.review import Console, DatasetLines, Review, SkipState
from retrieval_eval.commands.run import use_color
from retrieval_eval.compare.dense_model import retrievers_for
from retrieval_eval.errors import ConfigError
from retrieval_eval.load.corpus import load_corpus
from retrieval_eval.prepare import prepared_run
from retrieval_eval.retrieval.registry import RETRIEVER_NAMES, build_retriever, close_retriever
from retrieval_eval.vocabulary import ExitCode


@click.command("review")
@click.argument(
    "dataset", required=False, type=click.Path(exists=True, dir_okay=False, path_type=Path)
)
@click.option(
    "--holes",
    "holes_report",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Instead of a dataset: review the unlabelled documents that newly entered the top k "
    "of this report.json's regressed queries; accepting one adds it to the expected ids.",
)
@click.option(
    "--datasets",
    "datasets_dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="With --holes: the folder of the report's dataset files. Default: `datasets` from "
    "the config file.",
)
@click.option(
    "--corpus",
    "corpus_path",
    type=click.Path(path_type=Path),
    help="Corpus the ids refer to. Default: `corpus` from the config file.",
)
@click.option(
    "--retriever",
    "retriever_name",
    type=click.Choice(RETRIEVER_NAMES),
    help="Retriever whose top 5 is shown. Default: the one the config file maps "
    "this dataset file to.",
)
@click.option("--config", "config_file", type=click.Path(path_type=Path), help="Config file.")
@click.option("--include-skipped", is_flag=True, help="Show fixtures skipped earlier again.")
def review(
    dataset: Path | None,
    holes_report: Path | None,
    datasets_dir: Path | None,
    corpus_path: Path | None,
    retriever_name: str | None,
    config_file: Path | None,
    include_skipped: bool,
) -> int:
    """Review DATASET's synthetic fixtures: accepting one marks it human-annotated.

    Every decision is written to the file at once; quit at any time (x, or end of
    input) and run the command again to resume where you left off.
    """
    if holes_report is not None:
        if dataset is not None:
            raise click.UsageError("give a DATASET or --holes REPORT, not both")
        return _review_holes(holes_report, datasets_dir, corpus_path, config_file, include_skipped)
    if dataset is None:
        raise click.UsageError("give the DATASET file to review (or --holes report.json)")
    overrides: dict[str, object] = {"corpus": corpus_path} if corpus_path is not None else {}
    typed = (dataset, *([corpus_path] if corpus_path is not None else []))
    with prepared_run(
        workdir=Path.cwd(), config_file=config_file, overrides=overrides, typed_inputs=typed
    ) as ready:
        settings = ready.settings
        lines = DatasetLines(dataset)
        state = SkipState(settings.cache_dir, dataset)
        if include_skipped:
            state.skipped.clear()
        name = retriever_name or settings.retriever_for(dataset.name) or "hybrid"
        if name not in RETRIEVER_NAMES:
            raise ConfigError(
                f"retriever {name!r} for {dataset.name} is not one of {RETRIEVER_NAMES}"
            )
        corpus = load_corpus(settings.corpus)
        retriever = build_retriever(name, retrievers_for(settings, corpus))
        try:
            if not Review(lines, state, corpus, retriever, _console()).pending():
                click.echo(f"{dataset}: nothing to review (no synthetic fixtures left)")
                return int(ExitCode.OK)
            retriever.index(corpus)
            session = Review(lines, state, corpus, retriever, _console())
            left = session.run()
        finally:
            close_retriever(retriever)
        t = session.tally
        click.echo(
            f"\n{t.accepted} accepted, {t.rejected} rejected, {t.skipped} skipped"
            f" ({t.edited} edited); "
            + (f"{left} left to review: run the same command to resume" if left else "all reviewed")
        )
        return int(ExitCode.OK)


def _review_holes(
    report_path: Path,
    datasets_dir: Path | None,
    corpus_path: Path | None,
    config_file: Path | None,
    include_skipped: bool,
) -> int:
    overrides: dict[str, object] = {}
    if corpus_path is not None:
        overrides["corpus"] = corpus_path
    if datasets_dir is not None:
        overrides["datasets"] = datasets_dir
    typed = (report_path, *(p for p in (corpus_path, datasets_dir) if p is not None))
    with prepared_run(
        workdir=Path.cwd(), config_file=config_file, overrides=overrides, typed_inputs=typed
    ) as ready:
        settings = ready.settings
        report = read_report(report_path)
        if not candidates(report):
            click.echo(f"{report_path}: no unlabelled documents entered a regressed query's top k")
            return int(ExitCode.OK)
        corpus = load_corpus(settings.corpus)
        session = HoleReview(
            report,
            settings.datasets,
            settings.cache_dir,
            {doc.id: doc for doc in corpus.documents},
            _console(),
            include_skipped=include_skipped,
        )
        for query_id in session.tally.gone:
            click.echo(f"skipped {query_id}: no longer in its dataset file", err=True)
        if not session.queue:
            click.echo(f"{report_path}: every hole is decided (accepted, rejected or skipped)")
            return int(ExitCode.OK)
        left = session.run()
        t = session.tally
        click.echo(
            f"\n{t.accepted} accepted, {t.rejected} rejected, {t.skipped} skipped; "
            + (f"{left} left: run the same command to resume" if left else "all reviewed")
        )
        if t.accepted:
            click.echo("next: retrieval-eval run scores the queries with their new labels")
        return int(ExitCode.OK)


def _console() -> Console:
    def ask(prompt: str) -> str:
        shown = click.style(prompt, bold=True) if use_color() else prompt  # NO_COLOR
        click.echo(shown + " > ", nl=False)
        line = sys.stdin.readline()
        if not line:
            click.echo("")
            raise EOFError
        return line.rstrip("\n")

    return Console(echo=click.echo, ask=ask)
