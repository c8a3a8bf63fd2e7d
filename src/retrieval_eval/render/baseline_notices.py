"""What the comment and the job summary say about the baseline itself: stale, or ratcheted.

Each function returns Markdown with every user string (a dataset file name) escaped;
the ``*_log`` variants are the same facts as one plain line for the job log.
"""

from __future__ import annotations

import math

from retrieval_eval.compare.ratchet import Held, Moved
from retrieval_eval.compare.staleness import StaleBaseline, StaleMetric
from retrieval_eval.render.escape import escape_markdown
from retrieval_eval.render.filters import number
from retrieval_eval.score.measure_names import metric_label

# A notice is one paragraph at the top of the comment: name a few, count the rest.
SHOWN_METRICS = 5


def _fraction(value: float) -> str:
    return f"{100 * value:.1f}%"


def _stale_item(item: StaleMetric, *, markdown: bool) -> str:
    name = escape_markdown(item.dataset) if markdown else item.dataset
    by = "" if math.isinf(item.gain) else f", {_fraction(item.gain)} better"
    return (
        f"{name} {metric_label(item.metric)} {number(item.measured, item.metric)} "
        f"(baseline {number(item.baseline, item.metric)}{by})"
    )


def _items(stale: StaleBaseline, *, markdown: bool) -> str:
    shown = [_stale_item(m, markdown=markdown) for m in stale.metrics[:SHOWN_METRICS]]
    rest = len(stale.metrics) - len(shown)
    return "; ".join(shown) + (f"; and {rest} more" if rest else "")


def _measured_at(stale: StaleBaseline, *, markdown: bool) -> str:
    # The history is a file in the repository: its commit field is as untrusted as the rest.
    commit = (stale.commit or "")[:7] or "an unnamed commit"
    if markdown:
        commit = escape_markdown(commit)
    if stale.exact:
        return f"the base commit ({commit})"
    return f"the last evaluated commit of the default branch ({commit})"


def _tolerance(stale: StaleBaseline) -> str:
    """The tolerance the gains are beyond: one share, or each metric's when they differ."""
    shares = sorted({_fraction(m.tolerance) for m in stale.metrics})
    return shares[0] if len(shares) == 1 else " / ".join(shares)


def stale_headline(stale: StaleBaseline, *, baseline_name: str) -> str:
    """The clause a pass's headline ends with: what it compared against is behind."""
    first = stale.metrics[0]
    return (
        f"{baseline_name} is behind the default branch ({first.dataset} "
        f"{metric_label(first.metric)} {number(first.measured, first.metric)} there, "
        f"{number(first.baseline, first.metric)} in the baseline)"
    )


def stale_notice(stale: StaleBaseline, *, baseline_name: str) -> str:
    where = _measured_at(stale, markdown=True)
    return (
        f"⚠️ **{escape_markdown(baseline_name)} is behind the default branch.** "
        f"The history records {where} measuring {_items(stale, markdown=True)}: more than the "
        f"{_tolerance(stale)} tolerance above what the gate compares against, so a change "
        "could give that gain back and pass. Update the baseline "
        "(`retrieval-eval baseline update`), or set `baseline-update: ratchet` on the "
        "default branch's workflow."
    )


def stale_log(stale: StaleBaseline, *, baseline_name: str) -> str:
    where = _measured_at(stale, markdown=False)
    return (
        f"{baseline_name} is behind the default branch: {where} measured "
        f"{_items(stale, markdown=False)}, more than the {_tolerance(stale)} tolerance above it."
    )


def _moved_item(item: Moved, *, markdown: bool) -> str:
    name = escape_markdown(item.dataset) if markdown else item.dataset
    return (
        f"{name} {metric_label(item.metric)} {number(item.before, item.metric)} → "
        f"{number(item.after, item.metric)}"
    )


def ratchet_summary(moved: tuple[Moved, ...], held: tuple[Held, ...], *, baseline_name: str) -> str:
    """The job summary's section; empty when the ratchet had nothing to say."""
    if not moved and not held:
        return ""
    lines = [f"### ⬆️ {escape_markdown(baseline_name)} ratcheted\n"]
    if moved:
        lines.append("| dataset | metric | baseline | now |")
        lines.append("| --- | --- | --- | --- |")
        for item in moved:
            lines.append(
                f"| {escape_markdown(item.dataset)} | {metric_label(item.metric)} | "
                f"{number(item.before, item.metric)} | {number(item.after, item.metric)} |"
            )
        lines.append("")
    for kept in held:
        lines.append(f"- {escape_markdown(kept.dataset)} held: {escape_markdown(kept.reason)}")
    return "\n".join(lines) + "\n"


def ratchet_log(moved: tuple[Moved, ...], *, baseline_name: str) -> str:
    return (
        f"Raised {baseline_name} to this run's values: "
        + "; ".join(_moved_item(m, markdown=False) for m in moved)
        + ". Commit it in a following step."
    )
