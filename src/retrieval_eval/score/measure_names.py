"""Every measure, one record each: its name, kernel, cut-off rule, label, direction and
trec_eval name; and our spelling of a measure (``ndcg@10``) parsed into one internal form.

The run, ``beir`` and ``tune`` read our spelling; ``trec`` reads trec_eval's
(``ndcg_cut.10``, parsed in ``tools/trec/measures.py``) and finds here which of its families a
shared kernel computes; the reports read the labels. Adding a measure is one record.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Literal

from retrieval_eval.errors import ConfigError
from retrieval_eval.score import kernels
from retrieval_eval.score.ranked import FloatArray, RankedHits
from retrieval_eval.vocabulary import METRIC_LABELS

Kind = Literal[
    "mrr",
    "ndcg",
    "p",
    "recall",
    "map",
    "hit_rate",
    "r_precision",
    "num_q",
    "num_ret",
    "num_rel",
    "num_rel_ret",
]
# "required": only at a cut-off (ndcg@10); "optional": either (mrr, mrr@10); "never": uncut.
CutRule = Literal["required", "optional", "never"]
Kernel = Callable[[RankedHits, "int | None"], FloatArray]


@dataclass(frozen=True)
class MeasureRecord:
    """One measure family."""

    kind: Kind
    label: str  # how reports show it: NDCG (NDCG@10 at a cut-off)
    cut: CutRule
    kernel: Kernel  # per-query values, all queries at once (score/kernels.py)
    # trec_eval's family for the uncut measure and for the measure at a cut-off (None:
    # trec_eval has none the shared kernel computes).
    trec: str | None = None
    trec_cut: str | None = None
    higher_is_better: bool = True
    ours: bool = True  # accepted in our spelling (the counts are trec_eval's alone)


MEASURES: Mapping[Kind, MeasureRecord] = {
    record.kind: record
    for record in (
        MeasureRecord("mrr", "MRR", "optional", kernels.reciprocal_rank, trec="recip_rank"),
        MeasureRecord("ndcg", "NDCG", "required", kernels.ndcg, trec_cut="ndcg_cut"),
        MeasureRecord("p", "P", "required", kernels.precision, trec_cut="P"),
        MeasureRecord("recall", "Recall", "required", kernels.recall, trec_cut="recall"),
        MeasureRecord(
            "map", "MAP", "optional", kernels.average_precision, trec="map", trec_cut="map_cut"
        ),
        MeasureRecord("hit_rate", "HitRate", "required", kernels.hit_rate, trec_cut="success"),
        MeasureRecord("r_precision", "R-Precision", "never", kernels.r_precision, trec="Rprec"),
        MeasureRecord("num_q", "num_q", "never", kernels.num_q, trec="num_q", ours=False),
        MeasureRecord("num_ret", "num_ret", "never", kernels.num_ret, trec="num_ret", ours=False),
        MeasureRecord("num_rel", "num_rel", "never", kernels.num_rel, trec="num_rel", ours=False),
        MeasureRecord(
            "num_rel_ret",
            "num_rel_ret",
            "never",
            kernels.num_rel_ret,
            trec="num_rel_ret",
            ours=False,
        ),
    )
}

ACCEPTED_FORMS = (
    ", ".join(
        form
        for record in MEASURES.values()
        if record.ours
        for form in {
            "required": (f"{record.kind}@K",),
            "optional": (record.kind, f"{record.kind}@K"),
            "never": (record.kind,),
        }[record.cut]
    )
    + " (K >= 1)"
)

_OURS = re.compile(r"^(?P<kind>[a-z_]+)(?:@(?P<k>[0-9]+))?$")


@dataclass(frozen=True, order=True)
class Measure:
    """One measure at one cut-off; ``k is None`` means the whole ranking."""

    kind: Kind
    k: int | None = None

    @property
    def name(self) -> str:
        """Our canonical spelling, used as the key in results and baselines."""
        return self.kind if self.k is None else f"{self.kind}@{self.k}"

    @property
    def record(self) -> MeasureRecord:
        return MEASURES[self.kind]

    @property
    def label(self) -> str:
        shown = self.record.label
        return shown if self.k is None else f"{shown}@{self.k}"


def compute(hits: RankedHits, measure: Measure) -> FloatArray:
    """Per-query values of one measure, aligned with ``hits.query_ids``."""
    return measure.record.kernel(hits, measure.k)


def parse_measure(name: str) -> Measure:
    """Parse our spelling (case-insensitive, e.g. ``NDCG@10``); ConfigError names the bad input."""
    match = _OURS.match(name.strip().lower())
    if match is None:
        raise ConfigError(f"unknown measure {name!r}; accepted: {ACCEPTED_FORMS}")
    kind, k_text = match.group("kind"), match.group("k")
    k = int(k_text) if k_text is not None else None
    if k is not None and k < 1:
        raise ConfigError(f"measure {name!r} has cut-off {k}; cut-offs start at 1")
    record = MEASURES.get(kind)  # type: ignore[arg-type]
    if record is None or not record.ours:
        raise ConfigError(f"unknown measure {name!r}; accepted: {ACCEPTED_FORMS}")
    if record.cut == "required" and k is None:
        raise ConfigError(
            f"measure {name!r} needs a cut-off, e.g. {kind}@10; accepted: {ACCEPTED_FORMS}"
        )
    if record.cut == "never" and k is not None:
        raise ConfigError(f"unknown measure {name!r}; accepted: {ACCEPTED_FORMS}")
    return Measure(record.kind, k)


def trec_shared(family: str, param: float | None) -> Measure | None:
    """The measure a shared kernel computes for trec_eval's ``family`` at ``param`` (its
    cut-off), or None when trec_eval's own kernel must (``tools/trec/kernels.py``)."""
    for record in MEASURES.values():
        if record.trec == family:
            return Measure(record.kind)
        if record.trec_cut == family:
            return Measure(record.kind, int(param or 0))
    return None


def metric_label(metric: str) -> str:
    """Display name: ``ndcg@10`` → ``NDCG@10``; latency, cost, groundedness and the judge by
    their own labels; a name no record knows, as written (underscores as spaces)."""
    if metric in METRIC_LABELS:
        return METRIC_LABELS[metric]
    name, _, cut = metric.partition("@")
    record = MEASURES.get(name)  # type: ignore[call-overload]
    shown = record.label if record is not None else name.replace("_", " ")
    return f"{shown}@{cut}" if cut else shown
