"""`retrieval-eval import queries`: candidate fixtures from the queries people sent.

A log repeats itself, so queries are grouped by their normalised text (Unicode NFKC,
case folded, whitespace collapsed), each group's frequency the sum of its counts. A
sample of ``size`` groups is drawn without replacement with probability in proportion
to frequency (Efraimidis–Spirakis keys from one seeded generator), so the golden set
looks like the traffic; with a stratify column, each stratum gets a share of the sample
in proportion to its traffic first (largest remainder), so a small stratum is not lost.

Each candidate's suggested labels are the documents people clicked (or the answer
cited), most clicked first, else the current retriever's top hits. Either way the
fixture is ``synthetic``: nothing joins a golden set until `review` accepts it.
"""

from __future__ import annotations

import hashlib
import math
import random
import re
import unicodedata
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

_SPACE = re.compile(r"\s+")


def normalised(text: str) -> str:
    return _SPACE.sub(" ", unicodedata.normalize("NFKC", text).casefold()).strip()


@dataclass(frozen=True)
class QueryGroup:
    key: str  # the normalised text
    text: str  # the form people sent most often (the first seen on a tie)
    frequency: int
    clicks: tuple[str, ...]  # most clicked first
    stratum: str | None


def group_queries(
    records: Sequence[tuple[str, tuple[str, ...], int, Mapping[str, str]]],
    stratify: str | None,
) -> list[QueryGroup]:
    """(query, clicked ids, count, other fields) records → one group per normalised text,
    in the order each was first seen."""
    forms: dict[str, Counter[str]] = {}
    clicks: dict[str, Counter[str]] = {}
    strata: dict[str, Counter[str]] = {}
    for query, clicked, count, fields in records:
        key = normalised(query)
        forms.setdefault(key, Counter())[query.strip()] += count
        group_clicks = clicks.setdefault(key, Counter())
        for doc_id in clicked:
            group_clicks[doc_id] += count
        if stratify is not None:
            strata.setdefault(key, Counter())[fields.get(stratify, "").strip()] += count
    groups = []
    for key, counter in forms.items():
        stratum = None
        if stratify is not None:
            stratum = _most_common(strata[key])
        ranked_clicks = sorted(clicks[key].items(), key=lambda item: (-item[1], item[0]))
        groups.append(
            QueryGroup(
                key=key,
                text=_most_common(counter),
                frequency=sum(counter.values()),
                clicks=tuple(doc_id for doc_id, _ in ranked_clicks),
                stratum=stratum,
            )
        )
    return groups


def _most_common(counter: Counter[str]) -> str:
    best = max(counter.values())
    return next(value for value, count in counter.items() if count == best)


def sample_groups(groups: Sequence[QueryGroup], size: int | None, seed: int) -> list[QueryGroup]:
    """``size`` groups (all of them when None or more than there are), by frequency, each
    stratum its share; returned in descending frequency, then text."""
    if size is None or size >= len(groups):
        chosen = list(groups)
    else:
        rng = random.Random(seed)
        strata: dict[str | None, list[QueryGroup]] = {}
        for group in sorted(groups, key=lambda g: g.key):
            strata.setdefault(group.stratum, []).append(group)
        shares = _allocate(
            {name: sum(g.frequency for g in members) for name, members in strata.items()},
            {name: len(members) for name, members in strata.items()},
            size,
        )
        chosen = []
        for name in sorted(strata, key=lambda s: (s is None, s or "")):
            chosen += _weighted_sample(strata[name], shares[name], rng)
    return sorted(chosen, key=lambda g: (-g.frequency, g.key))


def _allocate(
    weights: Mapping[str | None, int], capacity: Mapping[str | None, int], size: int
) -> dict[str | None, int]:
    """``size`` split in proportion to ``weights`` (largest remainder), never more than a
    stratum holds; what one cannot take goes to the others. When ``size`` allows, every
    stratum gets one first, so a small one is not lost."""
    open_ = {name for name in weights if capacity[name] > 0}
    shares = {name: 1 if size >= len(open_) and name in open_ else 0 for name in weights}
    left = size - sum(shares.values())
    open_ = {name for name in open_ if shares[name] < capacity[name]}
    while left > 0 and open_:
        total = sum(weights[name] for name in open_)
        exact = {name: left * weights[name] / total for name in open_}
        give = {name: min(math.floor(exact[name]), capacity[name] - shares[name]) for name in open_}
        remainder = left - sum(give.values())
        order = sorted(open_, key=lambda n: (-(exact[n] - math.floor(exact[n])), str(n)))
        for name in order:
            if remainder <= 0:
                break
            if shares[name] + give[name] < capacity[name]:
                give[name] += 1
                remainder -= 1
        for name, amount in give.items():
            shares[name] += amount
        left = size - sum(shares.values())
        open_ = {name for name in open_ if shares[name] < capacity[name]}
        if not any(give.values()):
            break
    return shares


def _weighted_sample(
    groups: Sequence[QueryGroup], size: int, rng: random.Random
) -> list[QueryGroup]:
    keyed = [(rng.random() ** (1.0 / group.frequency), group.key, group) for group in groups]
    keyed.sort(key=lambda item: (-item[0], item[1]))
    return [group for _, _, group in keyed[:size]]


def query_id(group: QueryGroup) -> str:
    return "log-" + hashlib.sha256(group.key.encode("utf-8")).hexdigest()[:12]


def candidate_fixture(
    group: QueryGroup,
    *,
    retrieval_type: str,
    known_ids: Callable[[str], bool],
    top_hits: Callable[[str], Sequence[str]],
    stratify: str | None,
) -> tuple[dict[str, Any], str] | None:
    """The fixture and where its labels came from ("clicks" or "retriever"); None when
    there is nothing to suggest (no click in the corpus, no hit)."""
    clicked = [doc_id for doc_id in group.clicks if known_ids(doc_id)]
    source = "clicks" if clicked else "retriever"
    expected = clicked or list(dict.fromkeys(top_hits(group.text)))
    if not expected:
        return None
    record: dict[str, Any] = {
        "query_id": query_id(group),
        "query": group.text,
        "retrieval_type": retrieval_type,
        "expected_top_k_ids": expected,
        "ground_truth_source": "synthetic",
        "query_type": "logged",
    }
    if stratify is not None and group.stratum:
        record["tags"] = [f"{stratify}:{group.stratum}"]
    return record, source
