"""`retrieval-eval init`: scaffold a repository for a gated pull request
(``retrieval_eval.usecases.init``)."""

from __future__ import annotations

from pathlib import Path

import click

from retrieval_eval.usecases.init import scaffold
from retrieval_eval.vocabulary import ExitCode


@click.command("init")
@click.option(
    "--corpus",
    help="Corpus path, relative to the repository. Default: detected "
    "(a BEIR folder, a Bear database, a JSONL file or the largest folder of Markdown notes).",
)
@click.option(
    "--datasets",
    default="datasets",
    show_default=True,
    help="Folder for the golden datasets.",
)
@click.option(
    "--fork-safe",
    is_flag=True,
    help="Also write the workflow_run workflow that posts results of pull requests from forks.",
)
@click.option("--force", is_flag=True, help="Overwrite files that already exist.")
@click.option(
    "--root",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    default=Path("."),
    help="Repository root. Default: the current folder.",
)
def init(corpus: str | None, datasets: str, fork_safe: bool, force: bool, root: Path) -> int:
    """Write retrieval-eval.toml, the pull-request and baseline workflows and datasets/README.md.

    Never overwrites a file without --force; running it twice changes nothing.
    """
    scaffold(
        root.resolve(),
        corpus=corpus,
        datasets=datasets,
        fork_safe=fork_safe,
        force=force,
        say=click.echo,
    )
    return int(ExitCode.OK)
