"""`mode: embed-shard` and `mode: evaluate-shard`: the matrix jobs that post nothing.

Each does one slice of the work and leaves it in a folder for
``actions/upload-artifact``: the embedding cache (``cache-dir``) or the partial
result (``report-dir``). ``mode: merge`` is an evaluation like ``evaluate``
(``evaluation.py``) whose results come from those partials.
"""

from __future__ import annotations

import tempfile
from contextlib import nullcontext
from pathlib import Path

from retrieval_eval.action.base_config import TRUST_SETTINGS, base_config_file, gate_from_base
from retrieval_eval.action.evaluation import run_overrides
from retrieval_eval.action.event import (
    PULL_REQUEST_EVENTS,
    PullRequestActivity,
    decide_activity,
    read_event,
)
from retrieval_eval.action.github_api import GitHubApi
from retrieval_eval.action.inputs import ActionSettings
from retrieval_eval.action.runner_files import RunnerFiles
from retrieval_eval.errors import ConfigError
from retrieval_eval.settings import RunSettings
from retrieval_eval.vocabulary import ExitCode

SHARD_MODES = frozenset({"embed-shard", "evaluate-shard"})


def run_shard_mode(settings: ActionSettings, commands: RunnerFiles) -> ExitCode:
    """Embed or evaluate one shard; the run's settings as in `evaluate`, trust included."""
    # Imported here, as in evaluation.py: settings errors must not wait for chromadb.
    from retrieval_eval.index.cache_merge import merge_caches
    from retrieval_eval.index.model_install import verify_model
    from retrieval_eval.load.corpus import load_corpus
    from retrieval_eval.load.input_files import reading_within
    from retrieval_eval.pipeline import run_shard
    from retrieval_eval.retrieval.embed_shard import embed_into_cache
    from retrieval_eval.settings import load_settings
    from retrieval_eval.sharding import parse_shard
    from retrieval_eval.trust.guard import protect_process

    if not settings.shard:
        raise ConfigError(f"input `shard` (I/N) is required with `mode: {settings.mode}`")
    shard = parse_shard(settings.shard)
    with commands.group("Configuration"):
        run_settings = load_settings(
            workdir=settings.runner.workspace,
            config_file=settings.config,
            overrides=run_overrides(settings),
            overrides_source="Action inputs",
        )
        run_settings = _trust_from_base(settings, run_settings, commands)
        # As in `evaluate`: the retriever (a child, maybe the PR's code) must not see them.
        protect_process(patterns=run_settings.secret_env)
        commands.info(run_settings.model_dump_json(indent=2))
    dense = run_settings.retrievers.dense
    # As `run` does: a note symlinked out of the repository (to /proc/self/environ) is refused.
    roots = run_settings.input_roots()
    within = reading_within(roots) if roots is not None else nullcontext()
    if settings.mode == "embed-shard":
        with commands.group(f"Embedding shard {shard}"), within:
            summary = embed_into_cache(load_corpus(run_settings.corpus), dense, shard)
        line = (
            f"shard {shard}: {summary.selected} of {summary.chunks} chunks, "
            f"{summary.embedded} embedded, {summary.cached} already cached"
        )
    else:
        caches = _subfolders(settings.shard_artifacts)
        if caches and dense.model_dir is not None:
            with commands.group("Merging the embedding caches"):
                merged = merge_caches(run_settings.cache_dir, caches, verify_model(dense.model_dir))
                for warning in merged.warnings:
                    commands.warning(warning)
                commands.info(f"{merged.added} vectors from {merged.sources} cache(s)")
        with commands.group(f"Evaluating shard {shard}"):
            outcome = run_shard(
                run_settings,
                shard,
                progress=False,
                anthropic_api_key=settings.runner.anthropic_api_key,
            )
        if outcome.invalid is not None:
            for problem in outcome.invalid.problems:
                commands.error(problem.message, file=str(problem.file), line=problem.line)
        line = outcome.summary
        if outcome.exit_code != ExitCode.OK:
            commands.error(line)
            commands.append_summary(f"### ❌ retrieval-eval {line}\n")
            commands.set_outputs({"verdict": "invalid"})
            return outcome.exit_code
    commands.info(line)
    commands.append_summary(f"### retrieval-eval {line}\n")
    return ExitCode.OK


def _subfolders(folder: Path | None) -> list[Path]:
    if folder is None or not folder.is_dir():
        return []
    return sorted(path for path in folder.iterdir() if path.is_dir())


def shard_report_folders(folder: Path | None) -> list[Path]:
    """The folders of ``shard-artifacts`` that hold a shard's partial result."""
    if folder is None:
        raise ConfigError("input `shard-artifacts` is required with `mode: merge`")
    from retrieval_eval.compare.partial import PARTIAL_FILE

    return sorted(path.parent for path in folder.glob(f"*/{PARTIAL_FILE}"))


def _trust_from_base(
    settings: ActionSettings, run: RunSettings, commands: RunnerFiles
) -> RunSettings:
    """On a pull request, `secret_env` and `outside_roots` come from its base commit, as
    they do in `evaluate`: the shard runs the pull request's retriever over its corpus."""
    runner = settings.runner
    if runner.event_name not in PULL_REQUEST_EVENTS:
        return run
    activity = decide_activity(
        mode=settings.mode,
        event_name=runner.event_name,
        payload=read_event(runner.event_path),
        sha=runner.sha,
    )
    assert isinstance(activity, PullRequestActivity)
    api = GitHubApi(
        token=settings.github_token,
        api_url=runner.api_url,
        repository=runner.repository,
        retry_budget_seconds=settings.github_retry_seconds,
    )
    with tempfile.TemporaryDirectory(prefix="retrieval-eval-base-") as scratch:
        base_file, origin = base_config_file(
            workspace=runner.workspace,
            config_input=settings.config,
            base_sha=activity.base_sha,
            fetch_from_api=api.file_at,
            scratch_dir=Path(scratch),
        )
        gate = gate_from_base(
            run,
            base_file=base_file,
            origin=origin,
            workspace=runner.workspace,
            overrides=run_overrides(settings),
        )
    commands.info(f"secret_env and outside_roots come from {origin}.")
    return run.model_copy(update={name: getattr(gate.run, name) for name in TRUST_SETTINGS})
