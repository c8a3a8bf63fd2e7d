"""Synthetic golden fixtures written by Claude (`retrieval-eval generate`), each checked
against the corpus with the chosen retrievers before it is kept.

The fixtures are written into the configured datasets folder (added to the files there
with ``append``), the queries the checks flagged beside the report, and the written files
are validated: generate's own output must always validate.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import cast

from pydantic import SecretStr

from retrieval_eval.author.claude import GenerateError
from retrieval_eval.author.generate import (
    Checker,
    FileResult,
    GeneratePlan,
    first_prompt,
    fixture_line,
    flagged_line,
)
from retrieval_eval.author.generate import generate as run_generate
from retrieval_eval.author.prompts import PROMPT_VERSION
from retrieval_eval.compare.dense_model import retrievers_for
from retrieval_eval.errors import ConfigError, InputError
from retrieval_eval.fileio import atomic_write_text
from retrieval_eval.load.corpus import load_corpus
from retrieval_eval.load.fixtures import Fixture, LocatedFixture, RetrievalType
from retrieval_eval.progress import stderr_log, step
from retrieval_eval.retrieval.registry import build_retriever, close_retriever
from retrieval_eval.retrieval.timed import index_with_progress
from retrieval_eval.score.cached_claude import CachedClaude
from retrieval_eval.score.judge import build_client
from retrieval_eval.settings import RunSettings
from retrieval_eval.validate import validate_datasets
from retrieval_eval.validate.fixture_file import read_fixture_file

# Fixtures generated beyond `min_fixtures` by default, so review can reject some and the
# file still validates.
MARGIN = 5
CHECKERS = ("bm25", "dense", "like", "hybrid")


@dataclass(frozen=True)
class GenerateRequest:
    """What the user asked for, beside the settings."""

    types: tuple[RetrievalType, ...]
    per_file: int | None  # None: the settings' min_fixtures plus MARGIN
    tags: bool
    model: str
    max_cost_usd: float
    seed: int
    check_with: tuple[str, ...]
    flagged_path: Path | None  # None: generate-flagged.jsonl in the report folder
    force: bool
    append: bool


@dataclass(frozen=True)
class Generated:
    """What was written, file by file, and what it cost."""

    files: list[FileResult]
    before: dict[RetrievalType, int]  # fixtures each file held before (``append``)
    per_file: int
    datasets: Path
    flagged_file: Path | None  # None: nothing was flagged
    spent_usd: float
    calls: int
    cached_calls: int
    stopped: str | None  # why the cost cap stopped it early


def generate_fixtures(
    settings: RunSettings,
    request: GenerateRequest,
    *,
    api_key: SecretStr | None,
    interactive: bool,
) -> Generated:
    """Write ``request.per_file`` checked fixtures into each of the dataset files."""
    per_file = request.per_file
    if per_file is None:
        per_file = settings.min_fixtures + MARGIN
    targets = [settings.datasets / f"{kind}.jsonl" for kind in request.types]
    existing_files = [t for t in targets if t.exists()]
    if existing_files and not (request.force or request.append):
        raise InputError(
            "exists; pass --append to add fixtures to it, or --force to replace it",
            file=existing_files[0],
        )
    existing = _read_existing(existing_files) if request.append else {}
    if per_file + min((len(f) for f in existing.values()), default=0) <= settings.min_fixtures:
        stderr_log(
            f"warning: --per-file {per_file} leaves no room to reject: a file needs "
            f"{settings.min_fixtures} fixtures (min_fixtures) to validate, so one rejection "
            f"in review makes it invalid; use --per-file {settings.min_fixtures + MARGIN}"
        )
    corpus = load_corpus(settings.corpus)
    plan = GeneratePlan(
        types=request.types, per_file=per_file, tags=request.tags, seed=request.seed
    )
    client = (
        build_client(
            api_key=api_key.get_secret_value(),
            base_url=settings.judge.base_url,
            max_retries=settings.judge.max_retries,
            timeout_s=settings.judge.timeout_s,
        )
        if api_key is not None
        else None
    )
    claude = CachedClaude(
        client,
        model=request.model,
        prompt_version=PROMPT_VERSION,
        cache_dir=settings.cache_dir / "generate",
        pricing=settings.judge.pricing(),
        max_cost_usd=request.max_cost_usd,
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
    retrievers = [build_retriever(name, configured) for name in request.check_with]
    pace = settings.progress.pace()
    try:
        for retriever in retrievers:
            index_with_progress(
                retriever, corpus, interactive=interactive, log=stderr_log, pace=pace
            )
        with step(
            "generating fixtures",
            per_file * len(request.types),
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
    flagged_file = request.flagged_path or settings.report_dir / "generate-flagged.jsonl"
    if flagged:
        atomic_write_text(flagged_file, "".join(flagged_line(f) + "\n" for f in flagged))

    written = [settings.datasets / f"{f.retrieval_type}.jsonl" for f in result.files]
    report = validate_datasets(written, corpus=corpus, min_fixtures=0, min_human=0)
    if report.problems:  # our own output must validate; if not, that is a bug to report
        raise ConfigError(f"generated fixtures do not validate: {report.problems[0]}")
    return Generated(
        files=result.files,
        before={kind: len(fixtures) for kind, fixtures in existing.items()},
        per_file=per_file,
        datasets=settings.datasets,
        flagged_file=flagged_file if flagged else None,
        spent_usd=claude.spent_usd,
        calls=claude.calls,
        cached_calls=claude.cached_calls,
        stopped=result.stopped,
    )


def _read_existing(files: list[Path]) -> dict[RetrievalType, list[Fixture]]:
    """The fixtures already in each file (``append``); a file that does not read is
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
