"""On a pull request: say so when the default branch measures better than the baseline.

The comparison is made in ``compare/staleness.py``; this reads its two inputs the way
the run does (the baseline the gate uses, the history beside the workspace's baseline)
and turns a stale baseline into the comment's notice and a log warning.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from retrieval_eval.action.plan import RunPlan
from retrieval_eval.action.runner_files import RunnerFiles
from retrieval_eval.compare.baseline import load_baseline
from retrieval_eval.compare.history import read_history
from retrieval_eval.compare.policy import gate_policy
from retrieval_eval.compare.staleness import stale_baseline
from retrieval_eval.errors import RetrievalEvalError
from retrieval_eval.render.baseline_notices import stale_headline, stale_log, stale_notice


@dataclass(frozen=True)
class StaleNotice:
    notice: str  # the comment's paragraph
    headline: str  # the clause a passing headline ends with


def stale_baseline_notice(
    plan: RunPlan, *, baseline: Path, base_sha: str, commands: RunnerFiles
) -> StaleNotice | None:
    """The notice for the comment and the headline, or None. ``baseline`` is the file the
    gate reads.

    An unreadable baseline or history is the evaluation's to report (as an error, with
    its file and line); here it only means there is nothing to say.
    """
    run = plan.settings
    if run is None or run.history is None:
        return None
    try:
        previous = load_baseline(baseline)
        entries = read_history(run.history)
    except RetrievalEvalError:
        return None
    stale = stale_baseline(previous, entries, base_sha=base_sha, policy=gate_policy(run))
    if stale is None:
        return None
    name = run.baseline.name
    commands.warning(stale_log(stale, baseline_name=name), title="stale baseline")
    return StaleNotice(
        notice=stale_notice(stale, baseline_name=name),
        headline=stale_headline(stale, baseline_name=name),
    )
