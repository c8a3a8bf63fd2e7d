"""report.html: the report as one self-contained page, charts included.

It is read from the workflow's artifact, often offline, so it holds everything it shows:
inline CSS, inline SVG charts computed in ``charts.py``, no script, and a
Content-Security-Policy that forbids every fetch. It uses its own jinja2 environment with
HTML autoescaping on, so every user string (queries, ids, names) is escaped as HTML
wherever it lands, SVG ``<title>`` hover texts included, and shown as ``report.md`` shows it
(``escape.visible``: no direction overrides or control characters).
"""

from __future__ import annotations

from collections.abc import Sequence

from jinja2 import PackageLoader, StrictUndefined, select_autoescape
from jinja2.sandbox import SandboxedEnvironment

from retrieval_eval.render import charts
from retrieval_eval.render.challengers import BEATS_MARK, challenger_row, reference_row
from retrieval_eval.render.escape import visible
from retrieval_eval.render.filters import FILTERS
from retrieval_eval.render.judged_tier import TIER_FILTERS
from retrieval_eval.render.links import ReportLinks
from retrieval_eval.render.markdown import HEADLINE_METRICS
from retrieval_eval.render.summary import (
    dataset_status,
    delta_text,
    failing_first,
    is_failing,
    metric_row,
    resolution_text,
    row_p_value,
    row_status_text,
)
from retrieval_eval.render.template_code import keep_compiled
from retrieval_eval.results import RunReport

TEMPLATE = "report.html.j2"
# Nothing may be fetched: styles are inline, images are the page's own SVG.
CONTENT_SECURITY_POLICY = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"


def html_environment() -> SandboxedEnvironment:
    env = SandboxedEnvironment(
        loader=PackageLoader("retrieval_eval.render", "templates"),
        autoescape=select_autoescape(enabled_extensions=("html", "html.j2"), default=True),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        finalize=_shown,
    )
    # The number formats are shared with report.md; `md` is Markdown's escaping, not HTML's.
    env.filters.update({name: f for name, f in FILTERS.items() if name != "md"})
    env.filters.update(
        dataset_status=dataset_status,
        delta_text=delta_text,
        metric_row=metric_row,
        resolution=resolution_text,
        row_p=row_p_value,
        row_status=row_status_text,
    )
    env.filters.update(TIER_FILTERS)
    return keep_compiled(env)


def _shown(value: object) -> object:
    """Every value written, as report.md shows it: a direction override would make a name
    read as another. Markup (a macro's output, which has ``__html__``) is the template's own
    and passes as is."""
    if isinstance(value, str) and not hasattr(value, "__html__"):
        return visible(value)
    return value


def render_html(
    report: RunReport, *, notices: Sequence[str] = (), links: ReportLinks | None = None
) -> str:
    """The whole page. ``links`` (the Action's) make query ids link to their fixture line."""
    template = html_environment().get_template(TEMPLATE)
    datasets = failing_first(report.datasets)
    headline = report.measures[:HEADLINE_METRICS]
    sections = [
        {
            "d": d,
            "failing": is_failing(d),
            "scatter": charts.scatter(report, d, changes),
            "ranks": charts.rank_histogram(report, d, changes),
            "intervals": charts.intervals(d),
            "trends": charts.trends(report, d, headline),
            "lines": {q.query_id: q.line for q in d.queries} if links is not None else {},
        }
        for d in datasets
        for changes in [charts.query_changes(report, d)]
    ]
    challengers = [
        {
            "one": one,
            "rows": [
                reference_row(one, headline, "gated"),
                *(challenger_row(c, headline) for c in one.challengers),
            ],
            "charts": charts.challenger_deltas(one, headline),
        }
        for one in report.challengers
    ]
    return template.render(
        report=report,
        challengers=challengers,
        beats_mark=BEATS_MARK,
        notices=list(notices),
        datasets=datasets,
        sections=sections,
        headline_metrics=headline,
        links=links,
        csp=CONTENT_SECURITY_POLICY,
    )
