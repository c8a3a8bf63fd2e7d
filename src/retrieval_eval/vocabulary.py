"""The words retrieval-eval speaks, each defined once.

Metric names (each measure's own record is in score/measure_names.py), the verdicts
and what each one means for the exit code, the commit status and every renderer (one
record a verdict), the statuses of a metric row, and the commit-status description
limit. Every other module imports these instead of spelling them again, so adding a
verdict or renaming a label is a change in one place.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
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

# Labels of the metrics that are not measures (the measures' are in score/measure_names.py).
METRIC_LABELS: Mapping[str, str] = {
    LATENCY_P95: "Latency p95 (ms)",
    COST_PER_QUERY: "Cost / query ($)",
    GROUNDEDNESS: "Groundedness",
    JUDGE: "Judge (LLM, not deterministic)",
}


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

# One metric row of a dataset's table. "review": the rule's review band (a drop between half
# the tolerance and the tolerance), said beside a verdict it does not fail.
RowStatus = Literal[
    "ok",
    "improved",
    "regressed",
    "review",
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


# The commit status's state.
StatusState = Literal["success", "failure", "error"]


@dataclass(frozen=True)
class VerdictWords:
    """Everything a renderer says about one verdict: the exit code and commit status it
    means, and how the terminal, the comment, the badge and the HTML report show it."""

    exit_code: ExitCode
    state: StatusState
    icon: str  # report.md, the comment, the HTML report
    colour: str  # the terminal's (click's colour names)
    badge: str  # shields.io's named colour
    tone: Literal["good", "bad", "other"]  # the HTML report's banner


# An established baseline, a skipped run or an accepted regression must not block
# merging: nothing regressed that nobody accepted.
VERDICT_WORDS: Mapping[str, VerdictWords] = {
    "passed": VerdictWords(ExitCode.OK, "success", "✅", "green", "brightgreen", "good"),
    "baseline-established": VerdictWords(ExitCode.OK, "success", "📌", "cyan", "blue", "other"),
    "accepted": VerdictWords(ExitCode.OK, "success", "☑️", "cyan", "yellowgreen", "other"),
    "skipped": VerdictWords(ExitCode.OK, "success", "⏭️", "", "lightgrey", "other"),
    "regression": VerdictWords(ExitCode.FAILED, "failure", "❌", "red", "red", "bad"),
    "threshold": VerdictWords(ExitCode.FAILED, "failure", "❌", "red", "orange", "bad"),
    "invalid": VerdictWords(ExitCode.FAILED, "failure", "❌", "red", "red", "bad"),
    "error": VerdictWords(ExitCode.ERROR, "error", "⚠️", "yellow", "lightgrey", "other"),
}
# A verdict this version does not know (a newer report): said as an error, never a pass.
_UNKNOWN_VERDICT = VERDICT_WORDS["error"]


def verdict_words(verdict: str) -> VerdictWords:
    return VERDICT_WORDS.get(verdict, _UNKNOWN_VERDICT)


EXIT_CODE: Mapping[Verdict, ExitCode] = {v: VERDICT_WORDS[v].exit_code for v in VERDICTS}


def state_for(verdict: str) -> StatusState:
    return verdict_words(verdict).state


STATUS_DESCRIPTION_LIMIT = 140  # GitHub rejects longer commit-status descriptions with 422


def fit_status_description(text: str) -> str:
    """One line, at most 140 characters, cut with an ellipsis rather than rejected. Secrets
    are masked first: a cut could otherwise leave part of one that no mask matches."""
    line = " ".join(clean(text).split())
    if len(line) <= STATUS_DESCRIPTION_LIMIT:
        return line
    return line[: STATUS_DESCRIPTION_LIMIT - 1].rstrip() + "…"


# Icons in the report and the comment (read from VERDICT_WORDS).
VERDICT_ICON: Mapping[str, str] = {v: words.icon for v, words in VERDICT_WORDS.items()}


@dataclass(frozen=True)
class RowWords:
    """How a metric row's status is shown, and whether it fails the run."""

    text: str
    colour: str  # the terminal's
    failing: bool


ROW_STATUS: Mapping[RowStatus, RowWords] = {
    "ok": RowWords("✅ ok", "green", False),
    "improved": RowWords("✅ improved", "green", False),
    "regressed": RowWords("❌ regressed", "red", True),
    "review": RowWords("🔎 review", "yellow", False),
    "within-noise": RowWords("⚠️ within noise", "", False),
    "below-threshold": RowWords("❌ below threshold", "red", True),
    "above-ceiling": RowWords("❌ above ceiling", "red", True),
    "new": RowWords("🆕 new", "", False),
    "not-gated": RowWords("➖ not gated", "", False),
    "removed": RowWords("❌ removed", "red", True),
}
ROW_STATUS_TEXT: Mapping[str, str] = {status: words.text for status, words in ROW_STATUS.items()}


# --- the judged tier ----------------------------------------------------------------------
# Why the judged tier is reported beside the verdict instead of deciding it. Each reason is
# one line of the comment; `{kappa}`, `{floor}` and `{sample}` are filled by the renderer.
TierReason = Literal["no-key", "budget", "judge-failed", "no-agreement", "stale", "below-floor"]
TIER_REASONS: tuple[TierReason, ...] = get_args(TierReason)
TIER_NOT_GATING: Mapping[TierReason, str] = {
    "no-key": "ANTHROPIC_API_KEY is not set (a fork's pull request gets no secrets), so the "
    "documents nobody judged could not be judged and the agreement could not be checked",
    "budget": "the judge's budget ([judge] max_cost_usd) ran out before every document new in "
    "the top k was judged",
    "judge-failed": "a judge call failed before every document new in the top k was judged "
    "(the run's log says which)",
    "no-agreement": "the judge's agreement with the human tier could not be measured (no "
    "human-annotated pair to sample)",
    "stale": "the judge's agreement on record was measured with another judge model or prompt "
    "and could not be measured again",
    "below-floor": "the judge agrees with your people at κ {kappa} on {sample} pairs, below "
    "the floor of {floor} ([judged] kappa_floor)",
}
# The tier's place in the verdict, as its section's title says it.
TIER_STATUS: Mapping[bool, str] = {True: "gates the verdict", False: "reported, not gated"}
# Where the agreement the tier is gated on came from, and how the report says it.
AgreementSource = Literal["measured", "recorded", "stale"]
AGREEMENT_SOURCE: Mapping[AgreementSource, str] = {
    "measured": "measured by this run",
    "recorded": "as recorded in the baseline for this judge model and prompt",
    "stale": "recorded for another judge model or prompt",
}
# Said once when the gated retriever reranks with the model that judges: a judge can favour
# the rankings it made itself.
JUDGE_IS_RERANKER = (
    "The judge model also reranks the gated retriever's results (the Claude reranker): a judge "
    "can favour its own rankings, so read the judged tier's gains with care."
)
