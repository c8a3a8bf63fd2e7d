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

from retrieval_eval.action.inputs import ActionSettings
from retrieval_eval.action.plan import RunPlan
from retrieval_eval.action.runner_files import RunnerFiles
from retrieval_eval.errors import ConfigError
from retrieval_eval.prepare import within_roots
from retrieval_eval.vocabulary import ExitCode

SHARD_MODES = frozenset({"embed-shard", "evaluate-shard"})


def run_shard_mode(settings: ActionSettings, plan: RunPlan, commands: RunnerFiles) -> ExitCode:
    """Embed or evaluate one shard, with the run plan every mode uses."""
    # Imported here, as in evaluation.py: settings errors must not wait for chromadb.
    from retrieval_eval.sharding import parse_shard
    from retrieval_eval.usecases.shards import embed_shard, evaluate_shard

    if not settings.shard:
        raise ConfigError(f"input `shard` (I/N) is required with `mode: {settings.mode}`")
    shard = parse_shard(settings.shard)
    run_settings = plan.require()
    # As `run` does: a note symlinked out of the repository (to /proc/self/environ) is refused.
    if settings.mode == "embed-shard":
        with commands.group(f"Embedding shard {shard}"), within_roots(run_settings):
            summary = embed_shard(run_settings, shard, log=commands.info)
        line = (
            f"shard {shard}: {summary.selected} of {summary.chunks} chunks, "
            f"{summary.embedded} embedded, {summary.cached} already cached"
        )
    else:
        with commands.group(f"Evaluating shard {shard}"), within_roots(run_settings):
            outcome = evaluate_shard(
                run_settings,
                shard,
                progress=False,
                warn=commands.warning,
                anthropic_api_key=settings.runner.anthropic_api_key,
                caches=_subfolders(settings.shard_artifacts),
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
