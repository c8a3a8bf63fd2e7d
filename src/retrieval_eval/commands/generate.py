"""`retrieval-eval generate`: synthetic golden fixtures written by Claude, checked against
the corpus with BM25 and dense retrieval before they are kept
(``retrieval_eval.usecases.generate``)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, cast, get_args

import click

from retrieval_eval.commands.progress_flag import progress_option, show_progress
from retrieval_eval.commands.run import anthropic_api_key
from retrieval_eval.config.flags import (
    config_option,
    overrides_from_flags,
    settings_flags,
    typed_paths,
)
from retrieval_eval.load.fixtures import RetrievalType
from retrieval_eval.prepare import prepared_run
from retrieval_eval.score.judge import DEFAULT_JUDGE_MODEL
from retrieval_eval.usecases.generate import (
    CHECKERS,
    MARGIN,
    Generated,
    GenerateRequest,
    generate_fixtures,
)
from retrieval_eval.vocabulary import ExitCode

_TYPES: tuple[str, ...] = get_args(RetrievalType)
# `--out` is generate's name for `datasets`, the folder it writes into.
_NAMED = {"datasets": "--out"}


def _csv(
    choices: tuple[str, ...],
) -> Callable[[click.Context, click.Parameter, str], tuple[str, ...]]:
    """A comma-separated list of ``choices`` (order kept, repeats dropped)."""

    def convert(ctx: click.Context, param: click.Parameter, value: str) -> tuple[str, ...]:
        items = tuple(dict.fromkeys(v.strip() for v in value.split(",") if v.strip()))
        if not items or any(v not in choices for v in items):
            raise click.BadParameter(f"expected a comma-separated list of {', '.join(choices)}")
        return items

    return convert


@click.command("generate")
@click.option(
    "--per-file",
    type=click.IntRange(min=1),
    help="Fixtures to keep in each dataset file. Default: the config's min_fixtures plus "
    f"{MARGIN} to reject in review (25 with the defaults).",
)
@click.option(
    "--types",
    "types",
    callback=_csv(_TYPES),
    default="semantic,keyword,hybrid",
    show_default=True,
    help="Dataset files to write.",
)
@click.option(
    "--tags",
    is_flag=True,
    help="Add tag_filter cases to each file: one on a real tag, one expect_empty.",
)
@click.option("--model", default=DEFAULT_JUDGE_MODEL, show_default=True, help="Claude model.")
@click.option(
    "--max-cost-usd",
    type=click.FloatRange(min=0),
    default=1.0,
    show_default=True,
    help="Stop before the API spend could pass this.",
)
@click.option("--seed", type=int, default=0, show_default=True, help="Which documents are chosen.")
@click.option(
    "--check-with",
    "check_with",
    callback=_csv(CHECKERS),
    default="bm25,dense",
    show_default=True,
    help="Retrievers every query is checked against.",
)
@click.option(
    "--flagged",
    "flagged_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Where flagged queries go. Default: generate-flagged.jsonl in the report folder.",
)
@config_option
@click.option("--force", is_flag=True, help="Overwrite dataset files that exist.")
@click.option(
    "--append",
    is_flag=True,
    help="Add --per-file new fixtures to dataset files that exist, keeping every line "
    "already there (reviewed or not).",
)
@settings_flags("generate", named=_NAMED)
@progress_option
def generate(
    per_file: int | None,
    types: tuple[str, ...],
    tags: bool,
    model: str,
    max_cost_usd: float,
    seed: int,
    check_with: tuple[str, ...],
    flagged_path: Path | None,
    config_file: Path | None,
    force: bool,
    append: bool,
    progress: bool | None,
    **flags: Any,
) -> int:
    """Write synthetic fixtures (ground_truth_source "synthetic") for each dataset file.

    Needs ANTHROPIC_API_KEY unless every answer is already cached. Replies are cached
    in the cache folder, so a re-run is free and writes the same files. Exit 0 when
    done, 1 when the cost cap stopped it early (what was made is written), 2 on error.
    """
    if force and append:
        raise click.UsageError("--force replaces the files and --append adds to them: pick one")
    request = GenerateRequest(
        types=cast(tuple[RetrievalType, ...], types),
        per_file=per_file,
        tags=tags,
        model=model,
        max_cost_usd=max_cost_usd,
        seed=seed,
        check_with=check_with,
        flagged_path=flagged_path,
        force=force,
        append=append,
    )
    with prepared_run(
        workdir=Path.cwd(),
        config_file=config_file,
        overrides=overrides_from_flags(flags),
        typed_inputs=typed_paths(flags, "read"),
    ) as ready:
        made = generate_fixtures(
            ready.settings,
            request,
            api_key=anthropic_api_key(),
            interactive=show_progress(progress),
        )
    return _say(made)


def _say(made: Generated) -> int:
    """Each file's count, the flagged queries' file, the cost, and what to do next."""
    for file in made.files:
        before = made.before.get(file.retrieval_type, 0)
        kept_note = f" ({before} kept, {len(file.kept)} added)" if before else ""
        click.echo(
            f"{made.datasets.name}/{file.retrieval_type}.jsonl: "
            f"{before + len(file.kept)} fixtures{kept_note} "
            f"({len(file.flagged)} flagged, {file.regenerated} regenerated)"
        )
        if len(file.kept) < made.per_file and made.stopped is None:
            click.echo(
                f"warning: fewer than {made.per_file}: the corpus ran out of documents", err=True
            )
    if made.flagged_file is not None:
        click.echo(f"flagged queries (not kept): {made.flagged_file}")
    click.echo(f"cost: ${made.spent_usd:.4f} ({made.calls} API calls, {made.cached_calls} cached)")
    if made.stopped is not None:
        click.echo(f"stopped early: {made.stopped}", err=True)
        return int(ExitCode.FAILED)
    click.echo("next: retrieval-eval review FILE marks the ones you check as human-annotated")
    return int(ExitCode.OK)
