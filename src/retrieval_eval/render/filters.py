"""Formatting helpers, registered as jinja2 filters so templates stay declarative."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from retrieval_eval.render.escape import escape_markdown
from retrieval_eval.results import (
    AnnFidelitySummary,
    CollapseSummary,
    DatasetReport,
    GatePolicy,
    Resolution,
)
from retrieval_eval.score.measure_names import metric_label
from retrieval_eval.vocabulary import COST_PER_QUERY, LATENCY_P95, ROW_STATUS_TEXT, verdict_words

T = TypeVar("T")

MINUS = "−"  # a real minus sign: "-0.05" next to "+0.05" reads badly in proportional fonts


def number(value: float | None, metric: str = "") -> str:
    if value is None:
        return "—"
    if metric == LATENCY_P95 or metric.endswith("_ms"):
        return f"{value:.2f}"
    if metric == COST_PER_QUERY or metric.endswith("_usd"):
        return f"{value:.4f}"
    return f"{value:.3f}"


def signed(value: float | None, metric: str = "") -> str:
    if value is None:
        return "—"
    text = number(abs(value), metric)
    if float(text) == 0:
        return text
    return ("+" if value > 0 else MINUS) + text


def percent(value: float | None, digits: int = 1) -> str:
    if value is None:
        return "—"
    text = f"{abs(value):.{digits}f}"
    if float(text) == 0:
        return f"{text}%"
    return ("+" if value > 0 else MINUS) + text + "%"


def p_value(value: float) -> str:
    return "< 0.001" if value < 0.001 else f"{value:.3f}"


def rank(value: int | None) -> str:
    return "—" if value is None else str(value)


def pluralize(count: int, singular: str, plural: str | None = None) -> str:
    word = singular if count == 1 else (plural or singular + "s")
    return f"{count:,} {word}"


def take(rows: Sequence[T], limit: int | None) -> tuple[Sequence[T], int]:
    """The rows to show and how many were left out (for the truncation note)."""
    if limit is None or len(rows) <= limit:
        return rows, 0
    return rows[:limit], len(rows) - limit


def status_text(status: str) -> str:
    return ROW_STATUS_TEXT.get(status, status)


def verdict_icon(verdict: str) -> str:
    return verdict_words(verdict).icon


def verdict_tone(verdict: str) -> str:
    """The HTML report's banner: good, bad or other."""
    return verdict_words(verdict).tone


def query_count(dataset: DatasetReport) -> str:
    """A dataset's queries as its heading counts them: ``24 of 27 queries compared`` when
    some are new (or the baseline lost some), so the count agrees with the table's."""
    comparison = dataset.comparison
    total = pluralize(dataset.num_queries, "query", "queries")
    if comparison is None or not (comparison.added or comparison.removed):
        return total
    return f"{comparison.common_queries:,} of {total} compared"


def policy_line(policy: GatePolicy) -> str:
    """The gate's policy in one line, as the report, the comment and the terminal say it."""
    return policy.describe(metric_label)


def resolution_line(resolution: Resolution) -> str:
    """What a dataset can resolve, in one line: the report, the comment and the terminal."""
    label = metric_label(resolution.metric)
    size = pluralize(resolution.queries, "query", "queries")
    if resolution.detectable_drop is None:
        caught = f"this gate does not catch even a large drop in {label} four times in five"
    else:
        share = f"{resolution.detectable_drop * 100:.0f}%"
        caught = f"this gate catches a drop in {label} of ≥ {share} four times in five"
    tolerance = f"{resolution.tolerance * 100:g}%"
    if resolution.queries_to_resolve is None:
        resolve = f"no spread seen to say how many queries would resolve {tolerance}"
    elif resolution.queries_to_resolve <= resolution.queries:
        resolve = f"enough to resolve {tolerance}"
    else:
        resolve = f"≈ {resolution.queries_to_resolve:,} queries would resolve {tolerance}"
    line = f"{size}: {caught}; {resolve}"
    if resolution.change is not None and resolution.change_low is not None:
        assert resolution.change_high is not None
        line += (
            f". This change: {percent(resolution.change * 100)} "
            f"(95% interval {percent(resolution.change_low * 100)} to "
            f"{percent(resolution.change_high * 100)})"
        )
    if resolution.source == "spread":
        line += " (the spread between queries stands in: no query moved against a baseline)"
    return line


def ann_fidelity_text(fidelity: AnnFidelitySummary) -> str:
    """The one sentence the comment, report.md and the terminal give ANN fidelity."""
    return (
        f"ANN fidelity: recall@{fidelity.k} {number(fidelity.recall)} of exact search "
        f"on {pluralize(fidelity.queries, 'query', 'queries')} ({fidelity.index}); "
        "informational, not gated"
    )


def collapse_text(collapse: CollapseSummary) -> str:
    """The one sentence report.md gives a framework retriever's collapse of results."""
    shown = ", ".join(f"{documents} from {n}" for n, documents in collapse.histogram.items())
    return (
        f"Collapse: {pluralize(collapse.results, 'result')} (chunks) made "
        f"{pluralize(collapse.documents, 'document')} (documents from 1, 2, ... results: "
        f"{shown or 'none'}); informational, not gated"
    )


FILTERS: dict[str, Callable[..., Any]] = {
    "ann_fidelity": ann_fidelity_text,
    "collapse": collapse_text,
    "policy_line": policy_line,
    "query_count": query_count,
    "resolution_line": resolution_line,
    "md": escape_markdown,
    "num": number,
    "signed": signed,
    "pct": percent,
    "pvalue": p_value,
    "rank": rank,
    "plural": pluralize,
    "take": take,
    "status": status_text,
    "label": metric_label,
    "verdict_icon": verdict_icon,
    "verdict_tone": verdict_tone,
}
