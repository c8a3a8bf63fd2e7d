"""Measure names: ours (``ndcg@10``) and trec_eval's (``ndcg_cut.10``), one internal form.

Both spellings map onto :class:`Measure` so the same kernels serve the Action's
report and the ``trec`` command; only the printed names differ.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from retrieval_eval.errors import ConfigError

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

# Kinds that need a cut-off in our spelling; mrr and map also accept one, the rest never.
_CUT_REQUIRED: frozenset[str] = frozenset({"ndcg", "p", "recall", "hit_rate"})
_CUT_OPTIONAL: frozenset[str] = frozenset({"mrr", "map"})
_UNCUT: frozenset[str] = frozenset({"r_precision"})

ACCEPTED_FORMS = "mrr@K, ndcg@K, p@K, recall@K, map, map@K, hit_rate@K, r_precision (K >= 1)"

# trec_eval's default cut-offs for P, recall, ndcg_cut and map_cut.
TREC_DEFAULT_CUTOFFS: tuple[int, ...] = (5, 10, 15, 20, 30, 100, 200, 500, 1000)

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
    def trec_name(self) -> str:
        """The name trec_eval prints for this measure."""
        return _trec_printed_name(self)


def parse_measure(name: str) -> Measure:
    """Parse our spelling (case-insensitive, e.g. ``NDCG@10``); ConfigError names the bad input."""
    match = _OURS.match(name.strip().lower())
    if match is None:
        raise ConfigError(f"unknown measure {name!r}; accepted: {ACCEPTED_FORMS}")
    kind, k_text = match.group("kind"), match.group("k")
    k = int(k_text) if k_text is not None else None
    if k is not None and k < 1:
        raise ConfigError(f"measure {name!r} has cut-off {k}; cut-offs start at 1")
    if kind in _CUT_REQUIRED and k is not None:
        return Measure(kind, k)  # type: ignore[arg-type]
    if kind in _CUT_OPTIONAL or (kind in _UNCUT and k is None):
        return Measure(kind, k)  # type: ignore[arg-type]
    if kind in _CUT_REQUIRED:
        raise ConfigError(
            f"measure {name!r} needs a cut-off, e.g. {kind}@10; accepted: {ACCEPTED_FORMS}"
        )
    raise ConfigError(f"unknown measure {name!r}; accepted: {ACCEPTED_FORMS}")


# trec_eval families in the order trec_eval prints them (its measures.c table order).
TREC_FAMILIES: tuple[str, ...] = (
    "num_q",
    "num_ret",
    "num_rel",
    "num_rel_ret",
    "map",
    "Rprec",
    "recip_rank",
    "P",
    "recall",
    "ndcg_cut",
    "map_cut",
)
_TREC_CUT_FAMILIES: dict[str, Kind] = {
    "P": "p",
    "recall": "recall",
    "ndcg_cut": "ndcg",
    "map_cut": "map",
}
_TREC_PLAIN_FAMILIES: dict[str, Kind] = {
    "num_q": "num_q",
    "num_ret": "num_ret",
    "num_rel": "num_rel",
    "num_rel_ret": "num_rel_ret",
    "map": "map",
    "Rprec": "r_precision",
    "recip_rank": "mrr",
}
TREC_ACCEPTED_FORMS = (
    "num_q, num_ret, num_rel, num_rel_ret, map, Rprec, recip_rank, "
    "P[.K,...], recall[.K,...], ndcg_cut[.K,...], map_cut[.K,...]"
)
TREC_COUNT_KINDS: frozenset[str] = frozenset({"num_q", "num_ret", "num_rel", "num_rel_ret"})


def parse_trec_measures(names: list[str] | tuple[str, ...]) -> list[Measure]:
    """Parse ``-m`` arguments the way trec_eval does, returned in trec_eval's printing order.

    ``P`` alone means trec_eval's default cut-offs; ``P.5,10`` lists them. Unlike
    trec_eval, repeating a family (``-m P.5 -m P.10``) merges the cut-offs rather than
    keeping only the first.
    """
    cutoffs: dict[str, set[int]] = {}
    plain: set[str] = set()
    for raw in names:
        family, _, params = raw.partition(".")
        if family in _TREC_PLAIN_FAMILIES and not params:
            plain.add(family)
        elif family in _TREC_CUT_FAMILIES:
            cutoffs.setdefault(family, set()).update(_trec_cutoffs(raw, params))
        else:
            raise ConfigError(
                f"unsupported trec_eval measure {raw!r}; supported: {TREC_ACCEPTED_FORMS}"
            )
    measures: list[Measure] = []
    for family in TREC_FAMILIES:
        if family in plain:
            kind = _TREC_PLAIN_FAMILIES[family]
            measures.append(Measure(kind, None))
        elif family in cutoffs:
            kind = _TREC_CUT_FAMILIES[family]
            measures.extend(Measure(kind, k) for k in sorted(cutoffs[family]))
    return measures


def _trec_cutoffs(raw: str, params: str) -> tuple[int, ...]:
    if not params:
        return TREC_DEFAULT_CUTOFFS
    values: list[int] = []
    for part in params.split(","):
        if not part.isdigit() or int(part) < 1:
            raise ConfigError(f"measure {raw!r}: cut-off {part!r} is not a positive integer")
        values.append(int(part))
    if len(set(values)) != len(values):
        raise ConfigError(f"measure {raw!r}: duplicate cut-offs")
    return tuple(values)


def _trec_printed_name(measure: Measure) -> str:
    kind, k = measure.kind, measure.k
    if kind in TREC_COUNT_KINDS:
        return kind
    if kind == "r_precision":
        return "Rprec"
    if kind == "mrr" and k is None:
        return "recip_rank"
    if kind == "map" and k is None:
        return "map"
    families = {"p": "P", "recall": "recall", "ndcg": "ndcg_cut", "map": "map_cut"}
    if kind in families and k is not None:
        return f"{families[kind]}_{k}"
    raise ValueError(f"{measure.name} has no trec_eval name")
