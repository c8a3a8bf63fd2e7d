"""The words retrieval-eval speaks, each defined once.

Metric names and their display labels, the verdicts and what each one means
for the exit code, the commit status and the icon in the report, the statuses
of a metric row, and the commit-status description limit. Every other module
imports these instead of spelling them again, so adding a verdict or renaming a
label is a change in one place.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import IntEnum
from typing import Literal, get_args

from retrieval_eval.trust.redaction import clean

# The environment variable naming the installed model's folder. The container image sets
# it: the runner gives a container a fresh HOME, where the default folder would be empty.
MODEL_DIR_ENV = "RETRIEVAL_EVAL_MODEL_DIR"
# The cache folder (embeddings/, rerank/, runs/ inside) when the settings name none.
DEFAULT_CACHE_DIR = ".retrieval-eval-cache"

# Metrics that are not retrieval-quality measures; lower is better for latency and cost.
LATENCY_P95 = "latency_p95_ms"
COST_PER_QUERY = "cost_per_query_usd"
GROUNDEDNESS = "groundedness"
# The optional LLM judge's mean score: never gated by default, because it is not deterministic.
JUDGE = "judge"
LOWER_IS_BETTER = frozenset({LATENCY_P95, COST_PER_QUERY})

_METRIC_LABELS: Mapping[str, str] = {
    LATENCY_P95: "Latency p95 (ms)",
    COST_PER_QUERY: "Cost / query ($)",
    GROUNDEDNESS: "Groundedness",
    JUDGE: "Judge (LLM, not deterministic)",
}
_MEASURE_LABELS: Mapping[str, str] = {
    "mrr": "MRR",
    "ndcg": "NDCG",
    "p": "P",
    "recall": "Recall",
    "map": "MAP",
    "hit_rate": "HitRate",
    "r_precision": "R-Precision",
}


def metric_label(metric: str) -> str:
    """Display name: ``ndcg@10`` → ``NDCG@10``."""
    if metric in _METRIC_LABELS:
        return _METRIC_LABELS[metric]
    name, _, cut = metric.partition("@")
    shown = _MEASURE_LABELS.get(name, name.replace("_", " "))
    return f"{shown}@{cut}" if cut else shown


# What a run decided. The Action adds `skipped` (no change under `paths`, nothing evaluated)
# and `accepted` (a regression a maintainer accepted on the pull request with a label).
Verdict = Literal["passed", "regression", "threshold", "baseline-established", "invalid", "error"]
ActionVerdict = Literal[
    "passed",
    "regression",
    "threshold",
    "baseline-established",
    "skipped",
    "accepted",
    "invalid",
    "error",
]
VERDICTS: tuple[Verdict, ...] = get_args(Verdict)
ACTION_VERDICTS: tuple[ActionVerdict, ...] = get_args(ActionVerdict)

# One metric row of a dataset's table.
RowStatus = Literal[
    "ok",
    "improved",
    "regressed",
    "within-noise",
    "below-threshold",
    "above-ceiling",
    "new",
    "not-gated",
    "removed",
]
BREACHED: frozenset[RowStatus] = frozenset({"below-threshold", "above-ceiling"})


class ExitCode(IntEnum):
    """The contract with CI: 1 means "your change broke something", 2 means "we could not tell"."""

    OK = 0
    FAILED = 1  # gate failure or invalid datasets
    ERROR = 2  # bad configuration, unreadable file, retriever failure


EXIT_CODE: Mapping[Verdict, ExitCode] = {
    "passed": ExitCode.OK,
    "baseline-established": ExitCode.OK,
    "regression": ExitCode.FAILED,
    "threshold": ExitCode.FAILED,
    "invalid": ExitCode.FAILED,
    "error": ExitCode.ERROR,
}

# The commit status. An established baseline or a skipped run must not block merging:
# nothing regressed.
StatusState = Literal["success", "failure", "error"]
_STATE_OF_VERDICT: Mapping[str, StatusState] = {
    "passed": "success",
    "baseline-established": "success",
    "skipped": "success",
    "accepted": "success",
    "regression": "failure",
    "threshold": "failure",
    "invalid": "failure",
    "error": "error",
}


def state_for(verdict: str) -> StatusState:
    return _STATE_OF_VERDICT.get(verdict, "error")


STATUS_DESCRIPTION_LIMIT = 140  # GitHub rejects longer commit-status descriptions with 422


def fit_status_description(text: str) -> str:
    """One line, at most 140 characters, cut with an ellipsis rather than rejected. Secrets
    are masked first: a cut could otherwise leave part of one that no mask matches."""
    line = " ".join(clean(text).split())
    if len(line) <= STATUS_DESCRIPTION_LIMIT:
        return line
    return line[: STATUS_DESCRIPTION_LIMIT - 1].rstrip() + "…"


# Icons in the report and the comment.
VERDICT_ICON: Mapping[str, str] = {
    "passed": "✅",
    "regression": "❌",
    "threshold": "❌",
    "baseline-established": "📌",
    "accepted": "☑️",
    "invalid": "❌",
    "error": "⚠️",
}
ROW_STATUS_TEXT: Mapping[str, str] = {
    "ok": "✅ ok",
    "improved": "✅ improved",
    "regressed": "❌ regressed",
    "within-noise": "⚠️ within noise",
    "below-threshold": "❌ below threshold",
    "above-ceiling": "❌ above ceiling",
    "new": "🆕 new",
    "not-gated": "➖ not gated",
    "removed": "❌ removed",
}
