"""Render report.md / the PR comment from the packaged template.

One template, rendered in full for report.md and capped for the Action's two other
copies: the PR comment (GitHub rejects bodies over 65,536 characters) and the job
summary (the runner refuses one over 1 MiB, counted in bytes). Capping shows fewer
rows per section, each with a note saying how many were left out, rather than
cutting the text mid-table.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from jinja2 import PackageLoader, StrictUndefined
from jinja2.sandbox import SandboxedEnvironment

from retrieval_eval.compare.history import SPARKLINE_POINTS
from retrieval_eval.compare.verdict import check_text
from retrieval_eval.render.challengers import FILTERS as CHALLENGER_FILTERS
from retrieval_eval.render.filters import FILTERS
from retrieval_eval.render.gate_note import latency_cost_note
from retrieval_eval.render.judged_tier import TIER_FILTERS
from retrieval_eval.render.labels import LABEL_FILTERS
from retrieval_eval.render.links import REPORT_ARTIFACT, ReportLinks
from retrieval_eval.render.summary import (
    dataset_status,
    delta_text,
    is_failing,
    metric_row,
    no_break,
    query_id_cell,
    resolution_text,
    row_p_value,
    row_status_text,
    trend,
    value_text,
)
from retrieval_eval.render.template_code import keep_compiled
from retrieval_eval.results import DatasetChallengers, RunReport

TEMPLATE = "report.md.j2"
COMPARE_TEMPLATE = "compare.md.j2"
# The summary table shows this many of the run's measures (MRR@10 and NDCG@10 by default).
HEADLINE_METRICS = 2

# Rows per section tried in turn until the text fits.
_ROW_LIMITS = (25, 10, 5, 2, 0)
_CUT_NOTE = (
    "\n\n_The rest of this report was left out to fit a comment; the full report is report.md._\n"
)


def template_environment() -> SandboxedEnvironment:
    """Sandboxed: a custom template (later) must not reach Python internals."""
    env = SandboxedEnvironment(
        loader=PackageLoader("retrieval_eval.render", "templates"),
        autoescape=False,  # Markdown, not HTML: user text is escaped by the `md` filter
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters.update(FILTERS)
    env.filters.update(CHALLENGER_FILTERS)
    env.filters.update(
        check_text=check_text,
        dataset_status=dataset_status,
        delta_text=delta_text,
        latency_cost_note=latency_cost_note,
        metric_row=metric_row,
        no_break=no_break,
        query_id=query_id_cell,
        resolution=resolution_text,
        row_p=row_p_value,
        row_status=row_status_text,
        trend=trend,
        value_text=value_text,
    )
    env.filters.update(LABEL_FILTERS)
    env.filters.update(TIER_FILTERS)
    return keep_compiled(env)


def utf8_bytes(text: str) -> int:
    return len(text.encode("utf-8", errors="replace"))


def render_markdown(
    report: RunReport,
    *,
    max_chars: int | None,
    notices: Sequence[str] = (),
    full: str | None = None,
    size: Callable[[str], int] = len,
    links: ReportLinks | None = None,
) -> str:
    """The report as GitHub Markdown; ``size(text)`` at most ``max_chars`` when given.

    ``size`` is ``len`` for a comment (GitHub counts its characters) and ``utf8_bytes`` for
    the job summary (the runner counts its bytes: a CJK character takes three).
    ``full`` is this report's uncapped text when already rendered (report.md): it is
    reused as is when it fits, so a run renders the full report once (it must have been
    rendered with the same ``links``). ``links`` (the Action's) link each regressed query to
    its fixture's line and the report to the workflow run; without them nothing links."""
    template = template_environment().get_template(TEMPLATE)
    opened = _opened(report)
    datasets = sorted(report.datasets, key=lambda d: d.name not in opened)
    lines = _fixture_lines(report) if links is not None else {}

    def fixture_url(dataset: str, query_id: str) -> str | None:
        line = lines.get(dataset, {}).get(query_id)
        return None if links is None or line is None else links.fixture_url(dataset, line)

    def render(limit: int | None) -> str:
        return template.render(
            report=report,
            notices=list(notices),
            limit=limit,
            truncated=limit is not None,
            datasets=datasets,
            failing=[d for d in datasets if d.name in opened],
            passing=[d for d in datasets if d.name not in opened],
            headline_metrics=report.measures[:HEADLINE_METRICS],
            spark_points=SPARKLINE_POINTS,
            links=links,
            artifact=REPORT_ARTIFACT,
            fixture_url=fixture_url,
        )

    text = render(None) if full is None else full
    if max_chars is None or size(text) <= max_chars:
        return text
    for limit in _ROW_LIMITS:
        text = render(limit)
        if size(text) <= max_chars:
            return text
    cut = _cut(text, max_chars)
    while size(cut) > max_chars:  # several bytes a character: cut shorter in proportion
        cut = _cut(text, len(cut) * max_chars // size(cut))
    return cut


def _opened(report: RunReport) -> set[str]:
    """The datasets shown opened, first: the failing ones; when the datasets failed pooled
    (no one of them fails alone), the ones whose own drop was flagged for review."""
    failing = {d.name for d in report.datasets if is_failing(d)}
    if failing or report.verdict != "regression":
        return failing
    return {d.name for d in report.datasets if any(r.status == "review" for r in d.rows)}


def render_comparison(tables: Sequence[DatasetChallengers], metrics: Sequence[str]) -> str:
    """`retrieval-eval compare`'s Markdown: the comment's challenger table for each of
    ``tables``, on ``metrics``."""
    template = template_environment().get_template(COMPARE_TEMPLATE)
    return template.render(tables=list(tables), metrics=list(metrics))


def _fixture_lines(report: RunReport) -> dict[str, dict[str, int]]:
    """dataset -> query id -> the fixture's line in its file, for the links."""
    return {d.name: {q.query_id: q.line for q in d.queries} for d in report.datasets}


def _cut(text: str, max_chars: int) -> str:
    """Last resort (very many datasets): cut at a line, close open <details>, say so."""
    budget = max_chars - len(_CUT_NOTE) - len("\n</details>") * 8
    head = text[: max(budget, 0)]
    head = head[: head.rfind("\n") + 1] if "\n" in head else ""
    open_details = head.count("<details>") - head.count("</details>")
    if head.count("```") % 2:
        head += "```\n"
    closing = "\n</details>" * max(open_details, 0)
    return (head + closing + _CUT_NOTE)[:max_chars]
