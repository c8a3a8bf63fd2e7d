"""Per-query values of trec_eval's measures, all queries at once, as trec_eval 10.0 computes them.

Formulas and their floating-point order follow trec_eval's C code (doubles
throughout), so the printed ``%6.4f`` values agree to the last digit:

- ``gm_map``: per query log(max(AP, 1e-5)); the summary is exp(mean).
- ``bpref``: for each relevant retrieved document, 1 - min(n, R) / min(N, R), where n
  counts judged non-relevant documents ranked above it and N all judged non-relevant
  ones (1 when n is 0); summed and divided by R.
- ``infAP``: Yilmaz and Aslam's inferred AP; qrels grades below 0 mean "in the pool,
  not judged".
- ``iprec_at_recall_x``: the highest precision at or after the lround(x * R)-th
  relevant document (0 if fewer were retrieved).
- ``Rprec_mult_x``: precision at rank (long)(x * R + 0.9); past the end of the
  ranking, relevant retrieved / that rank.
- ``success_K``, ``set_P``, ``set_recall``, ``set_F`` (beta = its parameter), ``ndcg``
  (no cut-off; gains are the grades, whatever the relevance level).
- ``gm_bpref``: per query log(max(bpref, 1e-5)), summarised like ``gm_map``.
- ``11pt_avg``: the mean of the ``iprec_at_recall`` values at its recall levels
  (0.0, 0.1, ..., 1.0 unless given), added from the last level down.
- ``binG``: each relevant retrieved document adds 1 / log2(2 + judged-or-not
  documents above it that are not relevant); divided by R.
- ``relative_P_K``: relevant in the top K / min(K, R) (0 when R is 0).
- ``set_relative_P``: relevant retrieved / min(retrieved, R); ``set_map``:
  (relevant retrieved)^2 / (retrieved * R); ``utility``: p1 * relevant retrieved +
  p2 * other retrieved + p3 * relevant missed + p4 * (0 - retrieved - R + relevant
  retrieved), trec_eval's default coefficients being 1, -1, 0, 0.
- ``num_nonrel_judged_ret``: retrieved documents judged below the level (0 or more).
- ``unj_K``: retrieved documents in the top K without a judgment of 0 or more, / K.
- ``relstring``: the first N (10) retrieved documents' grades as text (see relstring()).
- ``G``, ``ndcg_rel``, ``Rndcg``, ``rbp``, ``rbp_resid``: see trec.graded.
"""

from __future__ import annotations

import math

import numpy as np

from retrieval_eval.score.measure_names import Measure, compute, trec_shared
from retrieval_eval.score.ranked import FloatArray, IntArray, RankedHits
from retrieval_eval.tools.trec.graded import gain_measure
from retrieval_eval.tools.trec.hits import TrecHits
from retrieval_eval.tools.trec.measures import GEOMETRIC, TrecMeasure
from retrieval_eval.tools.trec.segments import positions_within, suffix_max

MIN_GEO_MEAN = 0.00001
INFAP_EPSILON = 0.00001
_NO_CUT = 1 << 62
RELSTRING_LENGTH = 10
_GAIN_FAMILIES = frozenset({"G", "ndcg_rel", "Rndcg", "rbp", "rbp_resid"})


def trec_values(hits: TrecHits, measure: TrecMeasure, level: int) -> FloatArray:
    """Per-query values of one measure, aligned with ``hits.query_ids``."""
    family, param = measure.family, measure.param
    ranked = hits.ranked(level)
    if family in ("ndcg", "ndcg_cut"):
        # Gains are the grades whatever the relevance level; trec_eval's ndcg is uncut.
        cut = _NO_CUT if family == "ndcg" else int(param or 0)
        return compute(hits.ranked(1), Measure("ndcg", cut))
    shared = trec_shared(family, param)
    if shared is not None:
        return compute(ranked, shared)
    if family == "gm_map":
        return _logs(compute(ranked, Measure("map")))
    if family in ("bpref", "infAP"):
        return _judgment_based(hits, level, infap=family == "infAP")
    if family == "gm_bpref":
        return _logs(_judgment_based(hits, level, infap=False))
    if family == "iprec_at_recall":
        return _interpolated_precision(ranked, float(param or 0.0))
    if family == "11pt_avg":
        # trec_eval adds the levels' values from the last (highest) level down.
        total = np.zeros(hits.num_queries, dtype=np.float64)
        for fraction in reversed(measure.params):
            total += _interpolated_precision(ranked, fraction)
        return total / len(measure.params)
    if family == "binG":
        return _bin_g(ranked)
    if family in _GAIN_FAMILIES:
        if family == "rbp":
            return gain_measure(hits, family, level, measure.params[0])
        return gain_measure(hits, family, level)
    if family == "relative_P":
        return _relative_precision(ranked, int(param or 0))
    if family in ("set_relative_P", "set_map"):
        return _set_counts(ranked, family)
    if family == "utility":
        return _utility(ranked, measure.params)
    if family == "num_nonrel_judged_ret":
        below = (hits.judged_grade >= 0) & (hits.judged_grade < level)
        return np.bincount(hits.judged_query[below], minlength=hits.num_queries).astype(np.float64)
    if family == "unj":
        return _unjudged_share(hits, int(param or 0))
    if family == "relstring":  # text, see relstring(); no number to print
        return np.zeros(hits.num_queries, dtype=np.float64)
    if family == "Rprec_mult":
        return _precision_at_r_multiple(ranked, float(param or 0.0))
    if family in ("set_P", "set_recall", "set_F"):
        return _set_measure(ranked, family, float(param or 1.0))
    if family == "runid":
        return np.zeros(hits.num_queries, dtype=np.float64)
    raise ValueError(f"no kernel for {measure.name}")


def summarise(measure: TrecMeasure, values: FloatArray) -> float:
    """The ``all`` value: sum for counts, exp(mean) for gm_map, the mean otherwise.

    Values are added one after another in query order, as trec_eval accumulates them.
    """
    total = float(np.cumsum(values)[-1]) if values.size else 0.0
    if measure.is_count:
        return total
    if values.size == 0:
        return 0.0
    if measure.family in GEOMETRIC:
        return math.exp(total / values.size)
    return total / values.size


def relstring(hits: TrecHits, length: float = RELSTRING_LENGTH) -> tuple[str, ...]:
    """Per query, one character per document of the top ``length`` (its first parameter,
    truncated toward zero as C's cast does): its grade (0-9, '>' above 9), '.' for a negative
    grade (in the pool, not judged), '-' for a document not in the qrels."""
    widest = int(hits.num_ret.max(initial=0))
    width = max(0, min(int(length), widest))
    if width == 0:
        return ("",) * hits.num_queries
    shown = np.minimum(hits.num_ret, width)
    chars = np.zeros((hits.num_queries, width), dtype=np.uint8)
    chars[np.arange(width) < shown[:, None]] = ord("-")
    top = hits.judged_rank <= width
    grade = hits.judged_grade[top]
    symbol = np.where(grade > 9, ord(">"), np.where(grade < 0, ord("."), ord("0") + grade))
    chars[hits.judged_query[top], hits.judged_rank[top] - 1] = symbol
    packed = np.ascontiguousarray(chars).view(f"S{width}").reshape(-1)
    return tuple(text.decode("ascii") for text in packed.tolist())


def _logs(values: FloatArray) -> FloatArray:
    # math.log is C's log; numpy's vectorised log may differ in the last bit.
    return np.array([math.log(max(value, MIN_GEO_MEAN)) for value in values.tolist()])


def _bin_g(hits: RankedHits) -> FloatArray:
    nth = positions_within(hits.hit_query) + 1
    weights = 1.0 / np.log2((2 + hits.hit_rank - nth).astype(np.float64))
    total = np.bincount(hits.hit_query, weights=weights, minlength=hits.num_queries)
    out = np.zeros(hits.num_queries, dtype=np.float64)
    np.divide(total, hits.num_rel, out=out, where=hits.num_rel > 0)
    return out


def _relative_precision(hits: RankedHits, cut: int) -> FloatArray:
    within = np.bincount(hits.hit_query[hits.hit_rank <= cut], minlength=hits.num_queries)
    best = np.minimum(cut, hits.num_rel)
    out = np.zeros(hits.num_queries, dtype=np.float64)
    np.divide(within, best, out=out, where=best > 0)
    return out


def _set_counts(hits: RankedHits, family: str) -> FloatArray:
    found = np.bincount(hits.hit_query, minlength=hits.num_queries).astype(np.float64)
    retrieved = hits.num_ret.astype(np.float64)
    relevant = hits.num_rel.astype(np.float64)
    out = np.zeros(hits.num_queries, dtype=np.float64)
    both = (hits.num_ret > 0) & (hits.num_rel > 0)
    if family == "set_relative_P":
        np.divide(found, np.minimum(retrieved, relevant), out=out, where=both)
    else:
        np.divide(found * found, retrieved * relevant, out=out, where=both)
    return out


def _utility(hits: RankedHits, coefficients: tuple[float, ...]) -> FloatArray:
    """p1 * a + p2 * b + p3 * c + p4 * d, summed left to right as trec_eval does, with a
    collection of 0 documents (no -N). A query missing from the run (-c) scores 0: trec_eval
    resets its utility after scoring the stand-in ranking."""
    p1, p2, p3, p4 = coefficients
    found = np.bincount(hits.hit_query, minlength=hits.num_queries).astype(np.float64)
    retrieved = hits.num_ret.astype(np.float64)
    relevant = hits.num_rel.astype(np.float64)
    out = p1 * found + p2 * (retrieved - found)
    out = out + p3 * (relevant - found)
    out = out + p4 * (0.0 + found - retrieved - relevant)
    out[hits.num_ret == 0] = 0.0
    return out


def _unjudged_share(hits: TrecHits, cut: int) -> FloatArray:
    judged = (hits.judged_grade >= 0) & (hits.judged_rank <= cut)
    judged_in_top = np.bincount(hits.judged_query[judged], minlength=hits.num_queries)
    return (np.minimum(hits.num_ret, cut) - judged_in_top) / float(cut)


def _judgment_based(hits: TrecHits, level: int, *, infap: bool) -> FloatArray:
    """bpref or infAP from the judged retrieved documents in rank order."""
    query, rank, grade = hits.judged_query, hits.judged_rank, hits.judged_grade
    relevant = grade >= level
    nonrelevant = (grade >= 0) & ~relevant
    unjudged = grade < 0  # in the pool but not judged
    first = np.ones(query.size, dtype=bool)
    first[1:] = query[1:] != query[:-1]
    starts = np.flatnonzero(first)

    def before(mask: np.ndarray) -> IntArray:
        """How many of ``mask`` come before each row within its query."""
        running: IntArray = np.cumsum(mask, dtype=np.int64) - mask
        base = np.repeat(running[starts], np.diff(np.append(starts, query.size)))
        return running - base

    nonrel_above = before(nonrelevant)[relevant]
    rel_query = query[relevant]
    num_rel = hits.num_at_or_above(level)
    if not infap:
        judged_nonrel = np.bincount(
            hits.qrels_query[(hits.qrels_grade >= 0) & (hits.qrels_grade < level)],
            minlength=hits.num_queries,
        )
        r = num_rel[rel_query]
        denominator = np.minimum(judged_nonrel[rel_query], r).astype(np.float64)
        with np.errstate(divide="ignore", invalid="ignore"):
            share = 1.0 - np.minimum(nonrel_above, r).astype(np.float64) / denominator
        gains = np.where(nonrel_above > 0, share, 1.0)
    else:
        rel_so_far = (before(relevant)[relevant] + 1).astype(np.float64)
        unjudged_above = before(unjudged)[relevant]
        j = (rank[relevant] - 1).astype(np.float64)
        seen = (rel_so_far - 1 + nonrel_above + unjudged_above).astype(np.float64)
        judged_before = rel_so_far - 1 + nonrel_above
        with np.errstate(divide="ignore", invalid="ignore"):
            share = (rel_so_far - 1 + INFAP_EPSILON) / (judged_before + 2 * INFAP_EPSILON)
            later = 1.0 / (j + 1.0) + (j / (j + 1.0)) * (seen / j) * share
        gains = np.where(j == 0, 1.0, later)
    summed = np.bincount(rel_query, weights=gains, minlength=hits.num_queries)
    out = np.zeros(hits.num_queries, dtype=np.float64)
    np.divide(summed, num_rel, out=out, where=num_rel > 0)
    return out


def _interpolated_precision(hits: RankedHits, fraction: float) -> FloatArray:
    """Highest precision at or after the lround(fraction * R)-th relevant document."""
    nth = positions_within(hits.hit_query) + 1
    precision = nth / hits.hit_rank
    best_after = suffix_max(hits.hit_query, precision)
    product = fraction * hits.num_rel
    floor = np.floor(product)
    cut = (floor + (product - floor >= 0.5)).astype(np.int64)  # C's lround, for x >= 0
    retrieved_relevant = np.bincount(hits.hit_query, minlength=hits.num_queries)
    want = np.maximum(cut, 1)[hits.hit_query]
    at_cut = nth == want
    out = np.zeros(hits.num_queries, dtype=np.float64)
    out[hits.hit_query[at_cut]] = best_after[at_cut]
    out[cut > retrieved_relevant] = 0.0
    return out


def _precision_at_r_multiple(hits: RankedHits, fraction: float) -> FloatArray:
    cut = np.floor(fraction * hits.num_rel + 0.9).astype(np.int64)  # C's (long)(x * R + 0.9)
    within = hits.hit_rank <= cut[hits.hit_query]
    relevant_within = np.bincount(hits.hit_query[within], minlength=hits.num_queries)
    retrieved_relevant = np.bincount(hits.hit_query, minlength=hits.num_queries)
    counted = np.where(cut > hits.num_ret, retrieved_relevant, relevant_within)
    out = np.zeros(hits.num_queries, dtype=np.float64)
    np.divide(counted, cut, out=out, where=cut > 0)
    return out


def _set_measure(hits: RankedHits, family: str, beta: float) -> FloatArray:
    found = np.bincount(hits.hit_query, minlength=hits.num_queries).astype(np.float64)
    precision = np.zeros(hits.num_queries, dtype=np.float64)
    np.divide(found, hits.num_ret, out=precision, where=hits.num_ret > 0)
    recall = np.zeros(hits.num_queries, dtype=np.float64)
    np.divide(found, hits.num_rel, out=recall, where=hits.num_rel > 0)
    if family == "set_P":
        return precision
    if family == "set_recall":
        return recall
    out = np.zeros(hits.num_queries, dtype=np.float64)
    # A negative beta can make the denominator 0: trec_eval prints the -nan that C's
    # division gives, so the division happens, without numpy's warning on stderr.
    with np.errstate(divide="ignore", invalid="ignore"):
        np.divide(
            (beta + 1.0) * precision * recall,
            beta * precision + recall,
            out=out,
            where=found > 0,
        )
    return out
