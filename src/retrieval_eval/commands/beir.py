"""`retrieval-eval beir DIR`: a retriever on a BEIR folder, scored
(``retrieval_eval.usecases.beir``).

The command parses the flags, prepares the retriever settings, prints the numbers and
writes the JSON summary and the TREC run where asked.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import click

from retrieval_eval.commands.progress_flag import progress_option, show_progress
from retrieval_eval.config.flags import overrides_from_flags, settings_flags, typed_paths
from retrieval_eval.fileio import atomic_write_text
from retrieval_eval.retrieval.registry import RETRIEVER_NAMES
from retrieval_eval.usecases.beir import CONFIGURED, evaluate_beir, prepared_retrievers, table
from retrieval_eval.vocabulary import ExitCode

_PATH = click.Path(path_type=Path)


@click.command("beir")
@click.argument("directory", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option(
    "--retriever",
    "retriever_name",
    type=click.Choice(RETRIEVER_NAMES),
    default="bm25",
    show_default=True,
    help=f"Retriever to evaluate ({', '.join(CONFIGURED)} need --config).",
)
@click.option(
    "--config",
    "config_file",
    type=click.Path(dir_okay=False, path_type=Path),
    help="retrieval-eval.toml (or pyproject.toml) whose [retrievers] tables to use; "
    "relative paths in it are taken from the current directory.",
)
@click.option(
    "--split", default="test", show_default=True, help="qrels/<split>.tsv to score against."
)
@click.option(
    "--k",
    type=click.IntRange(min=1),
    default=100,
    show_default=True,
    help="Documents retrieved per query.",
)
@click.option("--json", "json_path", type=_PATH, help="Write the numbers as one JSON object here.")
@click.option("--run", "run_path", type=_PATH, help="Write the ranking as a TREC run file here.")
@settings_flags("beir")
@progress_option
def beir(
    directory: Path,
    retriever_name: str,
    config_file: Path | None,
    split: str,
    k: int,
    json_path: Path | None,
    run_path: Path | None,
    progress: bool | None,
    **flags: Any,
) -> int:
    """Evaluate a retriever on the BEIR folder DIRECTORY."""
    with prepared_retrievers(
        config_file,
        overrides=overrides_from_flags(flags),
        typed_outputs=typed_paths(flags, "written", "atomic"),
    ) as ready:
        scores = evaluate_beir(
            ready,
            directory,
            retriever_name,
            split=split,
            k=k,
            interactive=show_progress(progress),
            anthropic_api_key=anthropic_api_key_value(),
        )
    click.echo(table(scores.summary))
    if json_path is not None:
        atomic_write_text(json_path, json.dumps(scores.summary, indent=2, default=str) + "\n")
    if run_path is not None:
        atomic_write_text(run_path, scores.trec_run())
    return ExitCode.OK


def anthropic_api_key_value() -> str | None:
    """The rerank stage's key comes only from the environment: config files get committed."""
    value = os.environ.get("ANTHROPIC_API_KEY", "").strip()
    return value or None
