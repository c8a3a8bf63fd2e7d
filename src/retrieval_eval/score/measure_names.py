"""Measure names in our spelling (``ndcg@10``), parsed into one internal form.

The ``trec`` command's names (``ndcg_cut.10``) are parsed in ``trec/measures.py`` and
mapped onto the same :class:`Measure` where a shared kernel computes them.
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

ACCEPTED_FORMS = "mrr, mrr@K, ndcg@K, p@K, recall@K, map, map@K, hit_rate@K, r_precision (K >= 1)"

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
