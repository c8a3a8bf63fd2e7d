"""The geometry of report.html's charts, computed here so the template only draws.

Each function turns one part of a report into plain numbers in SVG user units (points,
bars, lines, with the text each one shows on hover); ``templates/report.html.j2`` writes
them as inline SVG with jinja2's HTML autoescaping, so no chart needs JavaScript or a
library fetched from anywhere.
"""

from __future__ import annotations

import zlib
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from operator import attrgetter, eq, gt, lt
from typing import NamedTuple

from retrieval_eval.compare.gate import HISTORY_DIGITS, primary_metric
from retrieval_eval.render.challengers import p_phrase
from retrieval_eval.render.filters import number, rank, signed
from retrieval_eval.results import DatasetChallengers, DatasetReport, QueryMove, RunReport
from retrieval_eval.score.measure_names import metric_label

# Colours for query types, in the order types first appear; more types than colours repeat.
PALETTE = ("#0969da", "#bf3989", "#1a7f37", "#9a6700", "#8250df", "#cf222e", "#116329", "#57606a")
UNTYPED = "untyped"
# A query's point is moved by at most this share of the axis, the same way on every run
# (from its id), so queries with equal scores do not hide behind one another.
JITTER = 0.012

# At most this many points are drawn (each is an SVG element with its hover text): every
# query that moved first, then unmoved ones, picked by their id's hash so a re-run picks
# the same. The counts in the caption are of every query.
MAX_POINTS = 2000
SCATTER_SIZE = 300  # the plot's square, in SVG units
SCATTER_MARGIN = 44


@dataclass(frozen=True)
class ScatterPoint:
    x: float
    y: float
    colour: str
    title: tuple[str, ...]  # the hover text's lines: the query, its score, its first relevant rank


@dataclass(frozen=True)
class Scatter:
    metric: str
    points: tuple[ScatterPoint, ...]
    legend: tuple[tuple[str, str, int], ...]  # (query type, colour, queries)
    size: int = SCATTER_SIZE
    margin: int = SCATTER_MARGIN
    improved: int = 0
    regressed: int = 0
    unchanged: int = 0
    left_out: int = 0  # queries not drawn (beyond MAX_POINTS)

    @property
    def ticks(self) -> tuple[tuple[float, str], ...]:
        return tuple((self.size * i / 4, f"{i / 4:g}") for i in range(5))


def _jitter(query_id: str, salt: str) -> float:
    spread = zlib.crc32(f"{salt}:{query_id}".encode()) / 0xFFFFFFFF
    return (spread * 2 - 1) * JITTER


def _moves_by_id(dataset: DatasetReport) -> dict[str, QueryMove]:
    comparison = dataset.comparison
    if comparison is None:
        return {}
    return {m.query_id: m for m in (*comparison.regressed_most, *comparison.improved_most)}


def chart_metric(report: RunReport, dataset: DatasetReport) -> str:
    """The metric the comparison ranked its query moves by (MRR: the first relevant rank)."""
    comparison = dataset.comparison
    if comparison is not None:
        for move in (*comparison.regressed_most, *comparison.improved_most):
            return move.metric
    return primary_metric(report.measures)


class QueryChange(NamedTuple):
    """One query both runs scored: its score and first relevant rank before and after.
    ``same_rank`` is False when the score did not move but the rank before is not known
    (a metric other than MRR can stay put while the rank moves). A named tuple: a report
    of 100,000 queries makes as many."""

    query_id: str
    query: str
    query_type: str
    before: float
    after: float
    rank_before: int | None
    rank_after: int | None
    rank_known: bool


def query_changes(report: RunReport, dataset: DatasetReport) -> list[QueryChange]:
    """Every shared, scored query: a moved one from the comparison's lists, an unmoved one
    from this run (its score was the same before). Empty without a comparison."""
    comparison = dataset.comparison
    if comparison is None:
        return []
    metric = chart_metric(report, dataset)
    moves = _moves_by_id(dataset)
    added = set(comparison.added)
    # MRR is 1/rank of the first relevant document: an unchanged MRR is an unchanged rank.
    rank_follows_score = metric.startswith("mrr")
    changes = []
    for query in dataset.queries:
        if query.expect_empty or query.query_id in added or metric not in query.metrics:
            continue
        kind = query.query_type or UNTYPED
        move = moves.get(query.query_id)
        if move is not None:
            changes.append(
                QueryChange(
                    query.query_id,
                    query.query,
                    kind,
                    move.baseline,
                    move.current,
                    move.rank_before,
                    move.rank_after,
                    True,
                )
            )
        else:
            value = query.metrics[metric]
            known = rank_follows_score
            before = query.first_relevant_rank if known else None
            changes.append(
                QueryChange(
                    query.query_id,
                    query.query,
                    kind,
                    value,
                    value,
                    before,
                    query.first_relevant_rank,
                    known,
                )
            )
    return changes


def _hover(change: QueryChange, metric: str) -> tuple[str, ...]:
    if change.rank_known:
        ranks = f"{rank(change.rank_before)} → {rank(change.rank_after)}"
    else:
        ranks = f"now {rank(change.rank_after)} (score unchanged)"
    return (
        f"{change.query_id} ({change.query_type}): {change.query}",
        f"{metric_label(metric)} {number(change.before)} → {number(change.after)}",
        f"first relevant rank {ranks}",
    )


def scatter(
    report: RunReport, dataset: DatasetReport, changes: Sequence[QueryChange] | None = None
) -> Scatter | None:
    """Baseline against this run, one point per shared query; None without a comparison.
    ``changes`` are :func:`query_changes`' when the caller made them already."""
    if changes is None:
        changes = query_changes(report, dataset)
    if not changes:
        return None
    metric = chart_metric(report, dataset)
    # Whole columns at C speed (map): a report holds 100,000 queries or more.
    befores = list(map(attrgetter("before"), changes))
    afters = list(map(attrgetter("after"), changes))
    top = max(1.0, max(befores), max(afters))
    kinds = Counter(map(attrgetter("query_type"), changes))
    colours = {kind: PALETTE[i % len(PALETTE)] for i, kind in enumerate(sorted(kinds))}
    drawn = _drawn(changes)
    points = []
    for change in drawn:
        x = min(max(change.before / top + _jitter(change.query_id, "x"), 0.0), 1.0)
        y = min(max(change.after / top + _jitter(change.query_id, "y"), 0.0), 1.0)
        points.append(
            ScatterPoint(
                x=round(x * SCATTER_SIZE, 1),
                y=round((1 - y) * SCATTER_SIZE, 1),
                colour=colours[change.query_type],
                title=_hover(change, metric),
            )
        )
    return Scatter(
        metric=metric,
        points=tuple(points),
        legend=tuple((kind, colours[kind], kinds[kind]) for kind in sorted(kinds)),
        improved=sum(map(gt, afters, befores)),
        regressed=sum(map(lt, afters, befores)),
        unchanged=sum(map(eq, afters, befores)),
        left_out=len(changes) - len(drawn),
    )


def _drawn(changes: Sequence[QueryChange]) -> Sequence[QueryChange]:
    if len(changes) <= MAX_POINTS:
        return changes
    moved = [c for c in changes if c.after != c.before]
    still = sorted(
        (c for c in changes if c.after == c.before),
        key=lambda c: zlib.crc32(c.query_id.encode()),
    )
    return (moved + still)[:MAX_POINTS]


# The rank-change buckets, best first. A rank that went from 5 to 2 moved up by 3.
RANK_BUCKETS = (
    "found now",
    "up 5 or more",
    "up 2–4",
    "up 1",
    "same rank",
    "score unchanged",
    "down 1",
    "down 2–4",
    "down 5 or more",
    "lost",
    "not found in either run",
)
BETTER, SAME, WORSE = "#1a7f37", "#8c959f", "#cf222e"


def rank_bucket(change: QueryChange) -> str:
    return _bucket(change.rank_known, change.rank_before, change.rank_after)


def _bucket(rank_known: bool, before: int | None, after: int | None) -> str:
    if not rank_known:
        return "score unchanged"
    if before is None and after is None:
        return "not found in either run"
    if before is None:
        return "found now"
    if after is None:
        return "lost"
    moved = before - after
    if moved == 0:
        return "same rank"
    steps = abs(moved)
    size = "1" if steps == 1 else "2–4" if steps <= 4 else "5 or more"
    return f"{'up' if moved > 0 else 'down'} {size}"


@dataclass(frozen=True)
class Bar:
    label: str
    count: int
    width: float  # share of the widest bar, 0..1
    colour: str


def rank_histogram(
    report: RunReport, dataset: DatasetReport, changes: Sequence[QueryChange] | None = None
) -> tuple[Bar, ...]:
    """How far each shared query's first relevant document moved; empty buckets are left out."""
    counts = dict.fromkeys(RANK_BUCKETS, 0)
    if changes is None:
        changes = query_changes(report, dataset)
    # Queries share their few (known, before, after) ranks: each is bucketed once.
    ranks = Counter(
        zip(
            map(attrgetter("rank_known"), changes),
            map(attrgetter("rank_before"), changes),
            map(attrgetter("rank_after"), changes),
            strict=True,
        )
    )
    for (known, before, after), count in ranks.items():
        counts[_bucket(known, before, after)] += count
    widest = max(counts.values(), default=0)
    if widest == 0:
        return ()
    bars = []
    for index, label in enumerate(RANK_BUCKETS):
        if counts[label]:
            colour = BETTER if index < 4 else SAME if index < 6 else WORSE
            if label == "not found in either run":
                colour = SAME
            bars.append(Bar(label, counts[label], counts[label] / widest, colour))
    return tuple(bars)


@dataclass(frozen=True)
class Interval:
    """One metric's change (or value) with its 95% interval, as positions 0..1 on the axis."""

    label: str
    low: float
    mid: float
    high: float
    colour: str
    text: str


@dataclass(frozen=True)
class Intervals:
    title: str
    rows: tuple[Interval, ...]
    zero: float | None  # where 0 sits on the axis (a change), None for values on 0..1
    axis: tuple[str, str]  # the labels at either end


def intervals(dataset: DatasetReport) -> Intervals | None:
    """The paired test's mean change with its bootstrap interval, per metric; without a
    baseline, each mean with its own interval on 0..1."""
    comparison = dataset.comparison
    if comparison is not None and comparison.paired:
        tests = comparison.paired
        reach = _reach(v for t in tests for v in (t.ci_low, t.ci_high, t.mean_diff))
        at = _on_axis(reach)
        rows = []
        for t in tests:
            colour = WORSE if t.ci_high < 0 else BETTER if t.ci_low > 0 else SAME
            rows.append(
                Interval(
                    metric_label(t.metric),
                    at(t.ci_low),
                    at(t.mean_diff),
                    at(t.ci_high),
                    colour,
                    f"{signed(t.mean_diff)} [{signed(t.ci_low)}, {signed(t.ci_high)}]",
                )
            )
        return Intervals(
            "Change per metric on the shared queries (mean Δ, 95% bootstrap interval)",
            tuple(rows),
            at(0.0),
            (signed(-reach), signed(reach)),
        )
    shown = [
        (name, agg)
        for name, agg in dataset.aggregates.items()
        if agg.ci_low is not None and agg.ci_high is not None
    ]
    if not shown:
        return None
    rows = [
        Interval(
            metric_label(name),
            min(max(agg.ci_low or 0.0, 0.0), 1.0),
            min(max(agg.value, 0.0), 1.0),
            min(max(agg.ci_high or 0.0, 0.0), 1.0),
            SAME,
            f"{number(agg.value)} [{number(agg.ci_low)}, {number(agg.ci_high)}]",
        )
        for name, agg in shown
    ]
    return Intervals("Mean per metric (95% bootstrap interval)", tuple(rows), None, ("0", "1"))


def _reach(values: Iterable[float]) -> float:
    """Half the width of a change axis centred on 0: the largest change, with room."""
    return max(0.01, *(abs(v) for v in values)) * 1.1


def _on_axis(reach: float) -> Callable[[float], float]:
    """A change's position on an axis from -``reach`` (0) to +``reach`` (1)."""
    return lambda value: round((value + reach) / (2 * reach), 4)


def challenger_deltas(one: DatasetChallengers, metrics: Sequence[str]) -> tuple[Intervals, ...]:
    """Per headline metric, each challenger's Δ against the gated retriever: a bar from 0
    to the Δ, coloured by its sign, with Holm's p on hover (``intervals``' drawing). A
    challenger without that metric (it failed) has no bar; a metric no one has, no chart."""
    found = []
    for metric in metrics:
        scored = [(c.name, m) for c in one.challengers for m in c.metrics if m.metric == metric]
        if not scored:
            continue
        reach = _reach(m.delta for _, m in scored)
        at = _on_axis(reach)
        rows = tuple(
            Interval(
                name,
                at(min(m.delta, 0.0)),
                at(m.delta),
                at(max(m.delta, 0.0)),
                BETTER if m.delta > 0 else WORSE if m.delta < 0 else SAME,
                f"{signed(m.delta, metric)}, p {p_phrase(m.p_value)}",
            )
            for name, m in scored
        )
        found.append(
            Intervals(
                f"{metric_label(metric)}: each challenger minus the gated {one.reference} "
                "(Δ, with Holm-corrected p)",
                rows,
                at(0.0),
                (signed(-reach), signed(reach)),
            )
        )
    return tuple(found)


@dataclass(frozen=True)
class Trend:
    metric: str
    points: tuple[tuple[float, float, str], ...]  # (x, y, hover text); this run last
    low: str
    high: str
    width: int = 300
    height: int = 90

    @property
    def polyline(self) -> str:
        return " ".join(f"{x},{y}" for x, y, _ in self.points)


def trends(report: RunReport, dataset: DatasetReport, metrics: Sequence[str]) -> tuple[Trend, ...]:
    """The recorded runs on the default branch and this one, per metric with a history.
    This run is rounded as the history rounds what it records (as the sparklines are)."""
    found = []
    for metric in metrics:
        past = report.history.get(dataset.name, {}).get(metric, ())
        row = next((r for r in dataset.rows if r.metric == metric), None)
        if not past or row is None:
            continue
        values = [*past, round(row.current, HISTORY_DIGITS)]
        low, high = min(values), max(values)
        span = high - low or 1.0
        width, height, pad = 300, 90, 8
        step = (width - 2 * pad) / (len(values) - 1)
        points = []
        for index, value in enumerate(values):
            x = round(pad + index * step, 1)
            y = round(pad + (1 - (value - low) / span) * (height - 2 * pad), 1)
            when = "this run" if index == len(values) - 1 else f"run {index + 1} of {len(past)}"
            points.append((x, y, f"{metric_label(metric)} {number(value, metric)} ({when})"))
        found.append(Trend(metric, tuple(points), number(low, metric), number(high, metric)))
    return tuple(found)
