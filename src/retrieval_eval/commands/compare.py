"""`retrieval-eval compare`: N retrievers or configurations side by side, on a datasets
folder or a BEIR folder, each against the first (``retrieval_eval.usecases.compare``).

A side is a retriever name (its settings are the configuration's ``[retrievers]``) or the
name of a ``[challengers.NAME]`` table. The command parses the flags, prepares the settings
as every command does, and prints the comparison as Markdown or JSON.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from retrieval_eval.commands.beir import anthropic_api_key_value
from retrieval_eval.config.flags import (
    config_option,
    overrides_from_flags,
    settings_flags,
    typed_paths,
)
from retrieval_eval.prepare import prepared_run
from retrieval_eval.render.markdown import render_comparison
from retrieval_eval.usecases.compare import UnknownSide, compare_sides
from retrieval_eval.vocabulary import ExitCode


@click.command("compare")
@click.argument(
    "directory", required=False, type=click.Path(exists=True, file_okay=False, path_type=Path)
)
@click.option(
    "--retriever",
    "sides",
    multiple=True,
    required=True,
    metavar="NAME",
    help="A side: a retriever name (its [retrievers] settings) or a [challengers.NAME] table "
    "of the configuration. Give it twice or more; the first side is the reference.",
)
@config_option
@click.option(
    "--split", default="test", show_default=True, help="A BEIR folder's qrels/<split>.tsv."
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of Markdown.")
@click.option("--no-run-cache", is_flag=True, help="Retrieve every side again.")
@settings_flags("compare")
def compare(
    directory: Path | None,
    sides: tuple[str, ...],
    config_file: Path | None,
    split: str,
    as_json: bool,
    no_run_cache: bool,
    **flags: Any,
) -> int:
    """Compare retrievers on DIRECTORY: a BEIR folder, or a folder of datasets (default:
    the configured datasets, on the configured corpus)."""
    if len(sides) < 2:
        raise click.UsageError("give --retriever at least twice: the reference and a challenger")
    if len(set(sides)) != len(sides):
        raise click.UsageError("each --retriever names a different side")
    with prepared_run(
        workdir=Path.cwd(),
        config_file=config_file,
        overrides=overrides_from_flags(flags),
        typed_inputs=(*typed_paths(flags, "read"), *(() if directory is None else (directory,))),
        typed_outputs=typed_paths(flags, "written"),
    ) as ready:
        try:
            comparison = compare_sides(
                ready.settings,
                sides,
                directory,
                split=split,
                use_cache=not no_run_cache,
                anthropic_api_key=anthropic_api_key_value(),
            )
        except UnknownSide as error:
            raise click.UsageError(error.message) from None
    if as_json:
        click.echo(json.dumps(comparison.as_json(), indent=2))
    else:
        click.echo(render_comparison(comparison.tables, comparison.metrics), nl=False)
    return ExitCode.OK
