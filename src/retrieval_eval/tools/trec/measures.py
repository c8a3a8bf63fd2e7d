"""trec_eval's measure names, ``-m`` arguments and nicknames, in trec_eval's printing order.

``-m P.5,10`` marks the family ``P`` with cut-offs 5 and 10; ``-m P`` uses its
default cut-offs. As in trec_eval, a family's parameters come from the first
``-m`` that gives any, integer cut-offs are read like C's ``strtol``
(``ndcg_cut.23.4`` is ``ndcg_cut_23``), ``relstring``, ``utility`` and ``11pt_avg``
keep their parameters in the order given and print them as typed, and the nicknames ``official`` and
``all_trec`` mark several families at once (``all_trec``: every measure of
trec_eval 10.0's ``all_trec``).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Literal

from retrieval_eval.errors import ConfigError

ParamKind = Literal["none", "long", "double", "beta", "params", "pairs"]

_DOUBLE_NAME_ROOM = 8
_LONG_DEFAULT = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
RECALL_LEVELS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
# utility = p1 * relevant retrieved + p2 * other retrieved + p3 * relevant missed
#           + p4 * (documents in the collection - retrieved - relevant + relevant retrieved),
# the collection size being 0 here as in trec_eval without -N.
UTILITY_COEFFICIENTS = (1.0, -1.0, 0.0, 0.0)
RBP_PERSISTENCE = 0.9  # rbp's p; -m rbp.p=0.95 sets it

# trec_eval 10.0's measure table order (its measures.c): measures print in this order.
FAMILIES: dict[str, tuple[ParamKind, tuple[float, ...]]] = {
    "runid": ("none", ()),
    "num_q": ("none", ()),
    "num_ret": ("none", ()),
    "num_rel": ("none", ()),
    "num_rel_ret": ("none", ()),
    "map": ("none", ()),
    "gm_map": ("none", ()),
    "Rprec": ("none", ()),
    "bpref": ("none", ()),
    "recip_rank": ("none", ()),
    "iprec_at_recall": ("double", RECALL_LEVELS),
    "P": ("long", _LONG_DEFAULT),
    "relstring": ("params", (10.0,)),
    "recall": ("long", _LONG_DEFAULT),
    "infAP": ("none", ()),
    "gm_bpref": ("none", ()),
    "Rprec_mult": ("double", (0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0)),
    "utility": ("params", UTILITY_COEFFICIENTS),
    "11pt_avg": ("params", RECALL_LEVELS),
    "binG": ("none", ()),
    "G": ("none", ()),
    "ndcg": ("none", ()),
    "ndcg_rel": ("none", ()),
    "Rndcg": ("none", ()),
    "ndcg_cut": ("long", _LONG_DEFAULT),
    "map_cut": ("long", _LONG_DEFAULT),
    "relative_P": ("long", _LONG_DEFAULT),
    "success": ("long", (1, 5, 10)),
    "set_P": ("none", ()),
    "set_relative_P": ("none", ()),
    "set_recall": ("none", ()),
    "set_map": ("none", ()),
    "set_F": ("beta", (1.0,)),
    "num_nonrel_judged_ret": ("none", ()),
    "rbp": ("pairs", (RBP_PERSISTENCE,)),
    "rbp_resid": ("none", ()),
    "unj": ("long", (5, 10, 20)),
}

OFFICIAL: tuple[str, ...] = (
    "runid",
    "num_q",
    "num_ret",
    "num_rel",
    "num_rel_ret",
    "map",
    "gm_map",
    "Rprec",
    "bpref",
    "recip_rank",
    "iprec_at_recall",
    "P",
)
# trec_eval 10.0's all_trec names every family above (its table also holds dcg,
# ideal_dcg and preference measures, which all_trec leaves out).
ALL_TREC: tuple[str, ...] = tuple(FAMILIES)
NICKNAMES: dict[str, tuple[str, ...]] = {"official": OFFICIAL, "all_trec": ALL_TREC}

COUNT_FAMILIES: frozenset[str] = frozenset(
    {"num_q", "num_ret", "num_rel", "num_rel_ret", "num_nonrel_judged_ret"}
)
# Printed only on the summary line, never per query (as trec_eval does).
SUMMARY_ONLY: frozenset[str] = frozenset({"runid", "num_q", "gm_map", "gm_bpref"})
# Printed only per query (with -q), as a quoted string; no summary line.
PER_QUERY_ONLY: frozenset[str] = frozenset({"relstring"})
# Summarised as exp(mean) of per-query logs instead of the mean.
GEOMETRIC: frozenset[str] = frozenset({"gm_map", "gm_bpref"})

ACCEPTED = ", ".join(
    f"{name}[.PARAMS]" if kind != "none" else name for name, (kind, _) in FAMILIES.items()
)


@dataclass(frozen=True)
class TrecMeasure:
    """One printed trec_eval measure: a family at one parameter (if it takes any)."""

    family: str
    param: float | None = None
    label: str | None = None  # parameters as typed, for the kinds trec_eval prints verbatim
    params: tuple[float, ...] = ()  # a "params" family's values (its defaults if none given)

    @property
    def name(self) -> str:
        kind = FAMILIES[self.family][0]
        if kind == "long":
            return f"{self.family}_{int(self.param or 0)}"
        if kind == "double":
            # trec_eval formats it with "%3.2f" into room for 8 characters, so a cut-off of
            # 123456 prints as "123456.0" and one of 1e9 as "10000000".
            return f"{self.family}_{f'{self.param:3.2f}'[:_DOUBLE_NAME_ROOM]}"
        if kind in ("beta", "params", "pairs") and self.label is not None:
            return f"{self.family}_{self.label}"
        return self.family

    @property
    def is_count(self) -> bool:
        return self.family in COUNT_FAMILIES

    @property
    def is_text(self) -> bool:
        return self.family in PER_QUERY_ONLY


def parse_trec_measures(arguments: tuple[str, ...] | list[str]) -> list[TrecMeasure]:
    """``-m`` arguments to measures, in trec_eval's printing order (``official`` if none)."""
    marked: set[str] = set()
    params: dict[str, str] = {}
    for raw in arguments or ("official",):
        family, dot, text = raw.partition(".")
        if dot and not text:
            raise ConfigError(f"measure {raw!r}: nothing after the '.'")
        names = NICKNAMES.get(family, (family,))
        for name in names:
            if name not in FAMILIES:
                raise ConfigError(f"unsupported trec_eval measure {raw!r}; supported: {ACCEPTED}")
            marked.add(name)
        if dot:
            if family in NICKNAMES or FAMILIES[family][0] == "none":
                raise ConfigError(f"measure {raw!r}: {family} takes no parameters")
            params.setdefault(family, text)  # trec_eval keeps the first parameters given
    measures: list[TrecMeasure] = []
    for family, (kind, defaults) in FAMILIES.items():
        if family not in marked:
            continue
        given = params.get(family)
        if kind == "none":
            measures.append(TrecMeasure(family))
        elif kind == "pairs":
            values = defaults if given is None else _persistence(family, given)
            measures.append(TrecMeasure(family, label=given, params=values))
        elif kind == "params":
            values = defaults if given is None else _params(family, given)
            measures.append(TrecMeasure(family, label=given, params=values))
        elif kind == "beta":
            if given is None:
                measures.append(TrecMeasure(family, defaults[0]))
            else:
                measures.append(TrecMeasure(family, _c_atof(given, family), given))
        else:
            values = defaults if given is None else _cutoffs(family, given, kind)
            measures.extend(TrecMeasure(family, value) for value in values)
    return measures


def _persistence(family: str, text: str) -> tuple[float, ...]:
    """rbp's ``name=value`` parameters: ``p=0.95`` sets the persistence (the last one given
    wins, as in trec_eval). trec_eval's other pairs, gains per grade (``2=3.5``), are not
    supported."""
    persistence = RBP_PERSISTENCE
    for part in text.split(","):
        name, equals, value = part.partition("=")
        if not equals or not name or not value:
            raise ConfigError(f"measure '{family}.{text}': parameters are name=value pairs")
        if name != "p":
            raise ConfigError(
                f"measure '{family}.{text}': only p=PERSISTENCE is supported, not gains per grade"
            )
        persistence = _c_atof(value, family)
    if not math.isfinite(persistence):
        raise ConfigError(f"measure '{family}.{text}': p must be a finite number")
    return (persistence,)


def _params(family: str, text: str) -> tuple[float, ...]:
    """A family whose parameters trec_eval keeps in the order given and prints as typed
    (``utility_2,-1,0,0``, ``11pt_avg_.25,.5,.75``, ``relstring_20``)."""
    values = tuple(_c_atof(part, family) for part in text.split(","))
    if not all(math.isfinite(value) for value in values):
        raise ConfigError(f"measure '{family}.{text}': parameters must be finite numbers")
    if family == "utility" and len(values) != len(UTILITY_COEFFICIENTS):
        raise ConfigError(
            f"measure 'utility.{text}': utility takes 4 coefficients "
            "(relevant retrieved, other retrieved, relevant missed, other missed)"
        )
    if family == "11pt_avg" and list(values) != sorted(values):
        # trec_eval walks the levels from the last one down, assuming this order.
        raise ConfigError(f"measure '11pt_avg.{text}': give the recall levels in ascending order")
    return values


def _cutoffs(family: str, text: str, kind: ParamKind) -> tuple[float, ...]:
    parts = text.split(",")
    values = sorted(_c_strtol(p) if kind == "long" else _c_atof(p, family) for p in parts)
    if kind == "long" and values[0] <= 0:
        raise ConfigError(
            f"measure '{family}.{text}': cut-offs must be positive integers (read as {values})"
        )
    if len(set(values)) != len(values):
        raise ConfigError(f"measure '{family}.{text}': duplicate cut-offs")
    return tuple(values) if kind == "long" else tuple(float(v) for v in values)


_LEADING_INT = re.compile(r"\s*([+-]?[0-9]+)")
_LEADING_FLOAT = re.compile(r"\s*([+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)")


_LONG_MIN, _LONG_MAX = -(2**63), 2**63 - 1


def _c_strtol(text: str) -> int:
    """The leading integer of ``text``, 0 if none: how trec_eval reads a cut-off.

    Out of range, C's ``strtol`` gives the nearest 64-bit ``long`` (``P.99999999999999999999``
    is ``P_9223372036854775807``). Cut-offs stay Python ints so their printed names are exact.
    """
    match = _LEADING_INT.match(text)
    return min(max(int(match.group(1)), _LONG_MIN), _LONG_MAX) if match else 0


def _c_atof(text: str, family: str) -> float:
    match = _LEADING_FLOAT.match(text)
    if match is None:
        raise ConfigError(f"measure '{family}.{text}': {text!r} is not a number")
    return float(match.group(1))
