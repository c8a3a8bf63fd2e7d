"""`mode: embed-shard` and `mode: evaluate-shard`: the matrix jobs that post nothing.

Each does one slice of the work and leaves it in a folder for
``actions/upload-artifact``: the embedding cache (``cache-dir``) or the partial
result (``report-dir``). ``mode: merge`` is an evaluation like ``evaluate``
(``evaluation.py``) whose results come from those partials. All three use the same run
plan as ``evaluate`` (``plan.py``): on a pull request the gate and trust settings are the
base commit's in every shard, so the merge gives the verdict the unsharded run gives.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from retrieval_eval.action.inputs import ActionSettings
from retrieval_eval.action.plan import RunPlan
from retrieval_eval.action.runner_files import RunnerFiles
from retrieval_eval.errors import ConfigError
from retrieval_eval.prepare import within_roots
from retrieval_eval.vocabulary import ExitCode

if TYPE_CHECKING:
    from retrieval_eval.settings import RunSettings

SHARD_MODES = frozenset({"embed-shard", "evaluate-shard"})


def run_shard_mode(settings: ActionSettings, plan: RunPlan, commands: RunnerFiles) -> ExitCode:
    """Embed or evaluate one shard, with the run plan every mode uses."""
    # Imported here, as in evaluation.py: settings errors must not wait for chromadb.
    from retrieval_eval.compare.baseline import models_recorded_at
    from retrieval_eval.compare.dense_model import choose_run_model
    from retrieval_eval.index.cache_merge import merge_caches
    from retrieval_eval.index.model_catalog import model_spec
    from retrieval_eval.index.model_install import verify_model_of
    from retrieval_eval.load.corpus import load_corpus
    from retrieval_eval.pipeline import run_shard
    from retrieval_eval.retrieval.builtin.embed_shard import embed_into_cache
    from retrieval_eval.sharding import parse_shard

    if not settings.shard:
        raise ConfigError(f"input `shard` (I/N) is required with `mode: {settings.mode}`")
    shard = parse_shard(settings.shard)
    run_settings = plan.require()
    # As `run` does: a note symlinked out of the repository (to /proc/self/environ) is refused.
    if settings.mode == "embed-shard":
        with commands.group(f"Embedding shard {shard}"), within_roots(run_settings):
            corpus = load_corpus(run_settings.corpus)
            # The whole corpus chooses the model, as in every shard and the merge.
            resolved, _ = choose_run_model(
                run_settings, corpus, models_recorded_at(run_settings.baseline), commands.info
            )
            summary = embed_into_cache(corpus, resolved.retrievers.dense, shard)
        line = (
            f"shard {shard}: {summary.selected} of {summary.chunks} chunks, "
            f"{summary.embedded} embedded, {summary.cached} already cached"
        )
    else:
        caches = _subfolders(settings.shard_artifacts)

        def merge_shard_caches(resolved: RunSettings) -> None:
            dense = resolved.retrievers.dense
            if not caches or dense.model_dir is None:
                return
            with commands.group("Merging the embedding caches"):
                # The vectors must be those of the model this run embeds with, whichever it is.
                spec = model_spec(dense.model)
                model = verify_model_of(dense.model_dir, spec)
                merged = merge_caches(resolved.cache_dir, caches, model, spec)
                for warning in merged.warnings:
                    commands.warning(warning)
                commands.info(f"{merged.added} vectors from {merged.sources} cache(s)")

        with commands.group(f"Evaluating shard {shard}"), within_roots(run_settings):
            outcome = run_shard(
                run_settings,
                shard,
                progress=False,
                anthropic_api_key=settings.runner.anthropic_api_key,
                before_index=merge_shard_caches,
            )
        if outcome.invalid is not None:
            for problem in outcome.invalid.problems:
                commands.error(problem.message, file=str(problem.file), line=problem.line)
        line = outcome.summary
        if outcome.exit_code != ExitCode.OK:
            commands.record("invalid", line, summary=f"### ❌ retrieval-eval {line}\n")
            return outcome.exit_code
    commands.info(line)
    commands.record("shard-done", line, summary=f"### retrieval-eval {line}\n", outputs={})
    return ExitCode.OK


def _subfolders(folder: Path | None) -> list[Path]:
    if folder is None or not folder.is_dir():
        return []
    return sorted(path for path in folder.iterdir() if path.is_dir())
