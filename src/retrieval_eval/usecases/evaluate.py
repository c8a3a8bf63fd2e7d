"""One evaluation: `retrieval-eval run` and the Action's `evaluate` mode.

The edge hands over the prepared settings and what it alone may read (the judge's key from
the environment, the Action's links); this builds the judge, runs the pipeline and turns
an error into an ``error`` outcome, so every ending is a verdict the edge reports; the
whole of it runs within ``time_limit_s`` (usecases/time_bound.py).
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import SecretStr

from retrieval_eval import pipeline
from retrieval_eval.errors import ConfigError, RetrievalEvalError
from retrieval_eval.pipeline import RunOutcome, error_outcome
from retrieval_eval.progress import Log, stderr_log
from retrieval_eval.render.links import ReportLinks
from retrieval_eval.score.judge import ClaudeJudge, build_client
from retrieval_eval.settings import JudgeSettings, RunSettings
from retrieval_eval.usecases.time_bound import bounded


@bounded
def run_evaluation(
    settings: RunSettings,
    *,
    progress: bool,
    notices: Sequence[str] = (),
    write_baseline: bool = True,
    rewrite_baseline: bool = False,
    log: Log = stderr_log,
    anthropic_api_key: SecretStr | None = None,
    links: ReportLinks | None = None,
    stale: str | None = None,
) -> RunOutcome:
    """Evaluate every dataset, gate it, write the report (and the baseline when due).

    ``rewrite_baseline`` is ``retrieval-eval baseline update`` (usecases/baseline.py): the
    old baseline is ignored (even a corrupt one) and every dataset's entry is replaced.
    ``anthropic_api_key`` comes from the edge (the environment), never from a file;
    ``links`` too (the Action's: the run and the fixtures on GitHub; a plain run has none).
    ``stale``: the baseline is behind the default branch (the Action's check), said in a
    passing headline.
    """
    try:
        judge = make_judge(settings.judge, anthropic_api_key)
        # The hybrid's Claude reranker, when configured, uses the same key as the judge.
        rerank_key = anthropic_api_key.get_secret_value() if anthropic_api_key else None
        return pipeline.run(
            settings,
            interactive=progress,
            notices=notices,
            write=write_baseline,
            rewrite=rewrite_baseline,
            log=log,
            judge=judge,
            rerank_key=rerank_key,
            links=links,
            stale=stale,
            api_key=anthropic_api_key,
        )
    except RetrievalEvalError as error:
        return error_outcome(error)


def make_judge(judge: JudgeSettings, api_key: SecretStr | None) -> ClaudeJudge | None:
    """None when the judge is off; an enabled judge without a key is a configuration error."""
    if not judge.enabled:
        return None
    if api_key is None or not api_key.get_secret_value():
        raise ConfigError(
            "the LLM judge is enabled but ANTHROPIC_API_KEY is not set: set the "
            "ANTHROPIC_API_KEY environment variable, or turn the judge off "
            "([judge] enabled = false, no --judge)"
        )
    client = build_client(
        api_key=api_key.get_secret_value(),
        base_url=judge.base_url,
        max_retries=judge.max_retries,
        timeout_s=judge.timeout_s,
    )
    return ClaudeJudge(client, model=judge.model, pricing=judge.pricing())
