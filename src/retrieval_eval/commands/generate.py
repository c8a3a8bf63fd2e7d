"""`retrieval-eval generate`: synthetic golden fixtures written by Claude, checked against
the corpus with BM25 and dense retrieval before they are kept."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import cast, get_args

import click

from retrieval_eval.author.claude import GenerateError
from retrieval_eval.author.generate import (
    Checker,
    GeneratePlan,
    first_prompt,
    fixture_line,
    flagged_line,
)
from retrieval_eval.author.generate import (
    generate as run_generate,
)
from retrieval_eval.author.prompts import PROMPT_VERSION
from retrieval_eval.commands.progress_flag import progress_option, show_progress
from retrieval_eval.commands.run import anthropic_api_key
from retrieval_eval.compare.dense_model import retrievers_for
from retrieval_eval.errors import ConfigError, InputError
from retrieval_eval.fileio import atomic_write_text
from retrieval_eval.load.corpus import load_corpus
from retrieval_eval.load.fixtures import Fixture, LocatedFixture, RetrievalType
from retrieval_eval.prepare import prepared_run
from retrieval_eval.progress import stderr_log, step
from retrieval_eval.retrieval.registry import build_retriever, close_retriever
from retrieval_eval.retrieval.timed import index_with_progress
from retrieval_eval.score.cached_claude import CachedClaude
from retrieval_eval.score.judge import DEFAULT_JUDGE_MODEL, build_client
from retrieval_eval.validate import validate_datasets
from retrieval_eval.validate.fixture_file import read_fixture_file
from retrieval_eval.vocabulary import ExitCode

_TYPES: tuple[str, ...] = get_args(RetrievalType)
# Fixtures generated beyond `min_fixtures` by default, so review can reject some and the
# file still validates.
MARGIN = 5
_CHECKERS = ("bm25", "dense", "like", "hybrid")


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
    "--corpus",
    "corpus_path",
    type=click.Path(path_type=Path),
    help="Corpus to write queries about. Default: `corpus` from the config file.",
)
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
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    help="Folder to write into. Default: `datasets` from the config file.",
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
    callback=_csv(_CHECKERS),
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
@click.option("--config", "config_file", type=click.Path(path_type=Path), help="Config file.")
@click.option("--force", is_flag=True, help="Overwrite dataset files that exist.")
@click.option(
    "--append",
    is_flag=True,
    help="Add --per-file new fixtures to dataset files that exist, keeping every line "
    "already there (reviewed or not).",
)
@progress_option
def generate(
    corpus_path: Path | None,
    per_file: int | None,
    types: tuple[str, ...],
    tags: bool,
    out: Path | None,
    model: str,
    max_cost_usd: float,
    seed: int,
    check_with: tuple[str, ...],
    flagged_path: Path | None,
    config_file: Path | None,
    force: bool,
    append: bool,
    progress: bool | None,
) -> int:
    """Write synthetic fixtures (ground_truth_source "synthetic") for each dataset file.

    Needs ANTHROPIC_API_KEY unless every answer is already cached. Replies are cached
    in the cache folder, so a re-run is free and writes the same files. Exit 0 when
    done, 1 when the cost cap stopped it early (what was made is written), 2 on error.
    """
    overrides: dict[str, object] = {}
    if corpus_path is not None:
        overrides["corpus"] = corpus_path
    if out is not None:
        overrides["datasets"] = out
    with prepared_run(
        workdir=Path.cwd(),
        config_file=config_file,
        overrides=overrides,
        typed_inputs=tuple(path for path in (corpus_path, out) if path is not None),
    ) as ready:
        settings = ready.settings
        if force and append:
            raise click.UsageError("--force replaces the files and --append adds to them: pick one")
        if per_file is None:
            per_file = settings.min_fixtures + MARGIN
        targets = [settings.datasets / f"{kind}.jsonl" for kind in types]
        existing_files = [t for t in targets if t.exists()]
        if existing_files and not (force or append):
            raise InputError(
                "exists; pass --append to add fixtures to it, or --force to replace it",
                file=existing_files[0],
            )
        existing = _read_existing(existing_files) if append else {}
        if per_file + min((len(f) for f in existing.values()), default=0) <= settings.min_fixtures:
            click.echo(
                f"warning: --per-file {per_file} leaves no room to reject: a file needs "
                f"{settings.min_fixtures} fixtures (min_fixtures) to validate, so one rejection "
                f"in review makes it invalid; use --per-file {settings.min_fixtures + MARGIN}",
                err=True,
            )
        corpus = load_corpus(settings.corpus)
        plan = GeneratePlan(
            types=cast(tuple[RetrievalType, ...], types),
            per_file=per_file,
            tags=tags,
            seed=seed,
        )
        key = anthropic_api_key()
        client = (
            build_client(
                api_key=key.get_secret_value(),
                base_url=settings.judge.base_url,
                max_retries=settings.judge.max_retries,
                timeout_s=settings.judge.timeout_s,
            )
            if key is not None
            else None
        )
        claude = CachedClaude(
            client,
            model=model,
            prompt_version=PROMPT_VERSION,
            cache_dir=settings.cache_dir / "generate",
            pricing=settings.judge.pricing(),
            max_cost_usd=max_cost_usd,
            failure=GenerateError,
        )
        # Before the slow part: without a key, go on only when the first answer is cached
        # (a re-run of a cached generation needs no key at all).
        first = first_prompt(corpus, plan, existing)
        if client is None and first is not None and not claude.is_cached(first):
            raise ConfigError(
                "ANTHROPIC_API_KEY is not set and the answers are not cached: "
                "export ANTHROPIC_API_KEY=sk-ant-... and run generate again"
            )
        configured = retrievers_for(settings, corpus)
        retrievers = [build_retriever(name, configured) for name in check_with]
        interactive = show_progress(progress)
        pace = settings.progress.pace()
        try:
            for retriever in retrievers:
                index_with_progress(
                    retriever, corpus, interactive=interactive, log=stderr_log, pace=pace
                )
            with step(
                "generating fixtures",
                per_file * len(types),
                interactive=interactive,
                log=stderr_log,
                unit="fixture",
                pace=pace,
            ) as tracker:
                result = run_generate(
                    corpus,
                    plan,
                    claude,
                    Checker(retrievers),
                    progress=stderr_log,
                    existing=existing,
                    on_kept=tracker.advance,
                )
        finally:
            for retriever in retrievers:
                close_retriever(retriever)

        flagged = [f for file in result.files for f in file.flagged]
        for file in result.files:
            path = settings.datasets / f"{file.retrieval_type}.jsonl"
            lines = [fixture_line(f) for f in sorted(file.kept, key=lambda f: f.query_id)]
            kept_text = path.read_text(encoding="utf-8") if file.retrieval_type in existing else ""
            if kept_text and not kept_text.endswith("\n"):
                kept_text += "\n"
            atomic_write_text(path, kept_text + "".join(line + "\n" for line in lines))
        flagged_file = flagged_path or settings.report_dir / "generate-flagged.jsonl"
        if flagged:
            atomic_write_text(flagged_file, "".join(flagged_line(f) + "\n" for f in flagged))

        written = [settings.datasets / f"{f.retrieval_type}.jsonl" for f in result.files]
        report = validate_datasets(written, corpus=corpus, min_fixtures=0, min_human=0)
        if report.problems:  # our own output must validate; if not, that is a bug to report
            raise ConfigError(f"generated fixtures do not validate: {report.problems[0]}")

        for file in result.files:
            before = len(existing.get(file.retrieval_type, ()))
            kept_note = f" ({before} kept, {len(file.kept)} added)" if before else ""
            click.echo(
                f"{settings.datasets.name}/{file.retrieval_type}.jsonl: "
                f"{before + len(file.kept)} fixtures{kept_note} "
                f"({len(file.flagged)} flagged, {file.regenerated} regenerated)"
            )
            if len(file.kept) < per_file and result.stopped is None:
                click.echo(
                    f"warning: fewer than {per_file}: the corpus ran out of documents", err=True
                )
        if flagged:
            click.echo(f"flagged queries (not kept): {flagged_file}")
        click.echo(
            f"cost: ${claude.spent_usd:.4f} "
            f"({claude.calls} API calls, {claude.cached_calls} cached)"
        )
        if result.stopped is not None:
            click.echo(f"stopped early: {result.stopped}", err=True)
            return int(ExitCode.FAILED)
        click.echo("next: retrieval-eval review FILE marks the ones you check as human-annotated")
        return int(ExitCode.OK)


def _read_existing(files: list[Path]) -> dict[RetrievalType, list[Fixture]]:
    """The fixtures already in each file (``--append``); a file that does not read is
    reported the way `validate` reports it, and nothing is generated."""
    existing: dict[RetrievalType, list[Fixture]] = {}
    for path in files:
        kind = cast(RetrievalType, path.stem)
        fixtures: list[Fixture] = []
        for item in read_fixture_file(path):
            if isinstance(item, LocatedFixture):
                fixtures.append(item.fixture)
            else:
                raise InputError(
                    f"{item.message}; fix it before --append", file=path, line=item.line
                )
        existing[kind] = fixtures
    return existing
