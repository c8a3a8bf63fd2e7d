"""`retrieval-eval baseline update`: rewrite the baseline from a fresh run, deliberately.

The old baseline is not read (a corrupt one is simply replaced), and a verdict that would
fail `run` (a regression, a breached threshold) does not stop the rewrite: the user asked
for these results to be the new reference. Only invalid datasets or an error do (a run
past ``time_limit_s`` is an error), and they leave the old baseline as it was.
"""

from __future__ import annotations

from dataclasses import replace

from pydantic import SecretStr

from retrieval_eval.pipeline import RunOutcome
from retrieval_eval.progress import Log, stderr_log
from retrieval_eval.settings import RunSettings
from retrieval_eval.usecases.evaluate import run_evaluation
from retrieval_eval.usecases.time_bound import bounded
from retrieval_eval.vocabulary import ExitCode


@bounded
def update_baseline(
    settings: RunSettings,
    *,
    progress: bool,
    log: Log = stderr_log,
    anthropic_api_key: SecretStr | None = None,
) -> RunOutcome:
    """Evaluate every dataset and replace the baseline with the results. The outcome's exit
    code is 0 once the baseline is rewritten, whatever the verdict."""
    outcome = run_evaluation(
        settings,
        progress=progress,
        rewrite_baseline=True,
        log=log,
        anthropic_api_key=anthropic_api_key,
    )
    if outcome.verdict in ("invalid", "error"):
        return outcome
    return replace(outcome, exit_code=ExitCode.OK)
