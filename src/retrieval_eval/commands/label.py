"""`retrieval-eval label`: the LLM judge labels the judged tier's pool
(``retrieval_eval.usecases.label``).

The command parses the flags, prepares the settings, reads the key from the environment
and prints what was judged and what it cost.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from retrieval_eval.commands.run import anthropic_api_key
from retrieval_eval.config.flags import (
    config_option,
    overrides_from_flags,
    settings_flags,
    typed_paths,
)
from retrieval_eval.errors import RetrievalEvalError, shown_path
from retrieval_eval.load.corpus import load_corpus
from retrieval_eval.prepare import prepared_run
from retrieval_eval.usecases.label import label_tier, summary
from retrieval_eval.vocabulary import ExitCode


@click.command("label")
@settings_flags("label")
@config_option
def label(config_file: Path | None, **flags: Any) -> int:
    """Judge the judged tier's pool with the LLM judge and write its judgments.

    Pools the top documents of the tier's gated retriever (the [dataset_retrievers] entry
    of the queries file's name) and of the challengers for every query of [judged] queries,
    judges each pair without a current judgment (new, or stale: another model, prompt or
    document text) within [judge] max_cost_usd, and rewrites [judged] judgments. Needs
    ANTHROPIC_API_KEY for any pair the reply cache cannot answer.
    """
    overrides = overrides_from_flags(flags)
    with prepared_run(
        workdir=Path.cwd(),
        config_file=config_file,
        overrides=overrides,
        typed_inputs=typed_paths(flags, "read"),
        typed_outputs=typed_paths(flags, "written", "atomic"),
    ) as ready:
        settings = ready.settings
        corpus = load_corpus(settings.corpus)
        outcome = label_tier(
            settings,
            corpus,
            api_key=anthropic_api_key(),
            log=lambda line: click.echo(line, err=True),
        )
    click.echo(
        summary(outcome, max_cost_usd=settings.judge.max_cost_usd, shown=shown_path),
    )
    if outcome.judging.stopped is not None and not outcome.judging.budget_reached:
        raise RetrievalEvalError(
            f"judging stopped: {outcome.judging.stopped}; the {len(outcome.judging.judgments):,} "
            f"pairs judged before it are written to {shown_path(outcome.path)}"
        )
    return int(ExitCode.OK)
