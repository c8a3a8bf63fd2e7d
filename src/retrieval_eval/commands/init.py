"""`retrieval-eval init`: scaffold a repository for a gated pull request."""

from __future__ import annotations

from pathlib import Path

import click

from retrieval_eval.author.detect import detect
from retrieval_eval.author.scaffold import (
    CONFIG,
    WORKFLOWS,
    check_workflow,
    plan_files,
    write_files,
)
from retrieval_eval.prepare import read_configuration
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
    root = root.resolve()
    detected = detect(root)
    if corpus is None:
        if detected.corpus is None:
            corpus = "corpus"
            click.echo(
                "warning: no corpus found (a folder of Markdown notes, a JSONL file, a BEIR "
                'folder or a Bear database); wrote corpus = "corpus": edit it, or run '
                "init --corpus PATH --force",
                err=True,
            )
        else:
            corpus = detected.corpus.path
            click.echo(f"corpus: {corpus} ({detected.corpus.reason})")
    if detected.code_dirs:
        click.echo("retrieval code: " + ", ".join(detected.code_dirs))
    planned = plan_files(detected, corpus=corpus, datasets=datasets, fork_safe=fork_safe)
    results = write_files(root, planned, force=force)
    (root / datasets).mkdir(parents=True, exist_ok=True)

    # Check what is on disk now, whether written or kept, the way a run will read it.
    read_configuration(workdir=root, config_file=CONFIG, overrides={})
    for workflow in WORKFLOWS:
        if (root / workflow).is_file():
            check_workflow(root / workflow)

    for result in results:
        note = {
            "written": "written",
            "overwritten": "overwritten (--force)",
            "unchanged": "unchanged",
            "kept": "exists and differs; kept (use --force to overwrite)",
        }[result.outcome]
        click.echo(f"{result.path}: {note}")
    steps = [
        (
            f"retrieval-eval generate --corpus {corpus} --per-file 20",
            "synthetic fixtures (needs ANTHROPIC_API_KEY)",
        ),
        (
            f"retrieval-eval review {datasets}/semantic.jsonl",
            "accept or fix them (also keyword.jsonl, hybrid.jsonl)",
        ),
        (
            "retrieval-eval run",
            "evaluate and write baseline.json; then commit and open a pull request",
        ),
    ]
    width = max(len(command) for command, _ in steps)
    click.echo("\nNext:")
    for command, why in steps:
        click.echo(f"  {command.ljust(width)}   # {why}")
    return int(ExitCode.OK)
