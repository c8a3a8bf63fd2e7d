"""Formatting helpers, registered as jinja2 filters so templates stay declarative."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from retrieval_eval.render.escape import escape_markdown
from retrieval_eval.results import AnnFidelitySummary
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


def ann_fidelity_text(fidelity: AnnFidelitySummary) -> str:
    """The one sentence the comment, report.md and the terminal give ANN fidelity."""
    return (
        f"ANN fidelity: recall@{fidelity.k} {number(fidelity.recall)} of exact search "
        f"on {pluralize(fidelity.queries, 'query', 'queries')} ({fidelity.index}); "
        "informational, not gated"
    )


FILTERS: dict[str, Callable[..., Any]] = {
    "ann_fidelity": ann_fidelity_text,
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
