"""trec_eval 10.0's gain-based measures: G, ndcg_rel, Rndcg, rbp and rbp_resid.

A document's gain is its grade (trec_eval's default gains); documents absent from
the qrels or graded below 0 gain nothing, and the relevance level (``-l``) does
not change a gain. The ideal ranking lists a query's judged documents by grade,
highest first; only its positive grades add to ideal sums. Sums run in rank
order in double precision, as trec_eval adds them.

- ``G``: each retrieved document with gain g at rank r adds g / log2(2 + C - S),
  where S is the gain retrieved up to r and C the sum of max(ideal gain, 1) over
  the first r ideal positions; the total is divided by the ideal gains' sum.
- ``ndcg_rel``: nDCG at each retrieved positive-gain document (the ideal DCG
  stops growing past the last positive ideal gain), plus, for each such document
  not retrieved, DCG at the end / the full ideal DCG; divided by their number.
- ``Rndcg``: the mean nDCG at each rank where the ideal gain changes, up to where
  it reaches 0, plus the end of the ranking if it runs past that rank by two or
  more; 0 for a query with nothing relevant at the ``-l`` level.
- ``rbp`` (p = 0.9 unless given): (1 - p) * sum of gain * p^(rank - 1), gains divided by the
  query's highest grade when that is above 1.
- ``rbp_resid``: p^num_ret + (1 - p) * sum of p^(rank - 1) over the retrieved
  documents without a judgment of 0 or more; 0 if there is none.
"""

from __future__ import annotations

import numpy as np

from retrieval_eval.score.ranked import FloatArray, IntArray, RankedHits
from retrieval_eval.tools.trec.hits import TrecHits
from retrieval_eval.tools.trec.measures import RBP_PERSISTENCE
from retrieval_eval.tools.trec.segments import last_of_each, positions_within, running_sums

# Terms of rbp_resid more than this many ranks after its first term cannot change
# the sum: with p = 0.9, p ** 400 is below half a unit in the last place of 1.
_RESID_HORIZON = 512


def gain_measure(
    hits: TrecHits, family: str, level: int, persistence: float = RBP_PERSISTENCE
) -> FloatArray:
    """``persistence`` is rbp's p (rbp_resid keeps trec_eval's 0.9)."""
    graded = hits.ranked(1)  # hits and ideal gains by grade, whatever the level
    if family == "G":
        return _g(graded)
    if family == "ndcg_rel":
        return _ndcg_rel(graded)
    if family == "Rndcg":
        return _rndcg(graded, hits.num_at_or_above(level))
    if family == "rbp":
        return _rbp(graded, persistence)
    if family == "rbp_resid":
        return _rbp_resid(hits)
    raise ValueError(f"no gain kernel for {family}")


def _ideal_query(graded: RankedHits) -> IntArray:
    return np.repeat(np.arange(graded.num_queries, dtype=np.int64), graded.num_rel)


def _ideal_index(graded: RankedHits, query: IntArray, depth: IntArray) -> IntArray:
    """Flat index of each query's ``depth``-th ideal gain (1-based; depth >= 1)."""
    return graded.ideal_offsets[query] + depth - 1


def _g(graded: RankedHits) -> FloatArray:
    query, rank, gain = graded.hit_query, graded.hit_rank, graded.hit_gain
    # Integer-valued sums are exact in any order.
    retrieved_gain = _integer_running_sums(query, gain)
    ideal_query = _ideal_query(graded)
    extra_cost = _integer_running_sums(ideal_query, graded.ideal_gains - 1.0)
    depth = np.minimum(rank, graded.num_rel[query])
    cost = rank + extra_cost[_ideal_index(graded, query, depth)]
    weights = gain / np.log2(2.0 + cost - retrieved_gain)
    total = np.bincount(query, weights=weights, minlength=graded.num_queries)
    ideal = np.bincount(ideal_query, weights=graded.ideal_gains, minlength=graded.num_queries)
    out = np.zeros(graded.num_queries, dtype=np.float64)
    np.divide(total, ideal, out=out, where=ideal > 0)
    return out


def _dcg_parts(graded: RankedHits) -> tuple[FloatArray, FloatArray]:
    """(DCG up to each hit, ideal DCG up to each ideal position), both running sums."""
    dcg = running_sums(graded.hit_query, graded.hit_gain / np.log2(graded.hit_rank + 1.0))
    ideal_query = _ideal_query(graded)
    ideal_rank = positions_within(ideal_query) + 1
    ideal = running_sums(ideal_query, graded.ideal_gains / np.log2(ideal_rank + 1.0))
    return dcg, ideal


def _ndcg_rel(graded: RankedHits) -> FloatArray:
    query, rank = graded.hit_query, graded.hit_rank
    npos = graded.num_rel
    dcg, ideal = _dcg_parts(graded)
    depth = np.minimum(rank, npos[query])
    at_hits = dcg / ideal[_ideal_index(graded, query, depth)]
    at_hits_total = np.bincount(query, weights=at_hits, minlength=graded.num_queries)
    dcg_end = last_of_each(query, dcg, graded.num_queries)
    ideal_end = last_of_each(_ideal_query(graded), ideal, graded.num_queries)
    missed = (npos - np.bincount(query, minlength=graded.num_queries)).astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        total: FloatArray = at_hits_total + missed * dcg_end / ideal_end
    out = np.zeros(graded.num_queries, dtype=np.float64)
    np.divide(total, npos, out=out, where=total > 0)  # NaN (no ideal gain) fails > 0
    return out


def _rndcg(graded: RankedHits, num_rel_at_level: IntArray) -> FloatArray:
    query, rank = graded.hit_query, graded.hit_rank
    npos, offsets, gains = graded.num_rel, graded.ideal_offsets, graded.ideal_gains
    dcg, ideal = _dcg_parts(graded)
    # Ranks where the ideal gain changes: after each run of equal positive grades.
    ideal_query = _ideal_query(graded)
    run_end = np.ones(gains.size, dtype=bool)
    run_end[:-1] = (gains[:-1] != gains[1:]) | (ideal_query[:-1] != ideal_query[1:])
    point_query = ideal_query[run_end]
    point_rank = (np.flatnonzero(run_end) - offsets[point_query] + 1).astype(np.int64)
    point_ideal = ideal[run_end]
    # One more point at the end of the ranking if it runs two or more past npos.
    past = np.flatnonzero((graded.num_ret > npos + 1) & (npos > 0))
    point_query = np.concatenate([point_query, past])
    point_rank = np.concatenate([point_rank, graded.num_ret[past]])
    point_ideal = np.concatenate([point_ideal, last_of_each(ideal_query, ideal, len(npos))[past]])
    order = np.lexsort((point_rank, point_query))
    point_query, point_rank, point_ideal = point_query[order], point_rank[order], point_ideal[order]
    point_dcg = _dcg_up_to(query, rank, dcg, point_query, point_rank)
    total = np.bincount(point_query, weights=point_dcg / point_ideal, minlength=len(npos))
    count = np.bincount(point_query, minlength=len(npos)).astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = total / count  # no point at all is trec_eval's 0 / 0
    out[num_rel_at_level == 0] = 0.0
    return out


def _dcg_up_to(
    query: IntArray, rank: IntArray, dcg: FloatArray, at_query: IntArray, at_rank: IntArray
) -> FloatArray:
    """DCG of each ``at_query``'s top ``at_rank`` documents (from running sums at hits)."""
    if query.size == 0:
        return np.zeros(at_query.size, dtype=np.float64)
    span = int(max(int(rank.max()), int(at_rank.max(initial=0)))) + 1
    keys = query * span + rank
    found = np.searchsorted(keys, at_query * span + at_rank, side="right") - 1
    clipped = np.maximum(found, 0)
    valid = (found >= 0) & (query[clipped] == at_query)
    return np.where(valid, dcg[clipped], 0.0)


def _powers(count: int, persistence: float = RBP_PERSISTENCE) -> FloatArray:
    """p^0 .. p^count by repeated multiplication, as trec_eval steps them."""
    steps = np.full(count + 1, persistence, dtype=np.float64)
    steps[0] = 1.0
    return np.cumprod(steps).astype(np.float64)


def _rbp(graded: RankedHits, persistence: float) -> FloatArray:
    query, rank, gain = graded.hit_query, graded.hit_rank, graded.hit_gain
    highest = np.zeros(graded.num_queries, dtype=np.float64)
    has_ideal = graded.num_rel > 0
    highest[has_ideal] = graded.ideal_gains[graded.ideal_offsets[:-1][has_ideal]]
    top = highest[query]
    scaled = np.where(top > 1.0, gain / np.where(top > 1.0, top, 1.0), gain)
    powers = _powers(int(rank.max(initial=0)), persistence)
    weights = scaled * powers[rank - 1]
    total = np.bincount(query, weights=weights, minlength=graded.num_queries).astype(np.float64)
    return (1.0 - persistence) * total


def _rbp_resid(hits: TrecHits) -> FloatArray:
    judged = hits.judged_grade >= 0
    judged_query, judged_rank = hits.judged_query[judged], hits.judged_rank[judged]
    num_judged = np.bincount(judged_query, minlength=hits.num_queries)
    num_ret = hits.num_ret.astype(np.int64)
    # The first rank without a judgment is at most num_judged + 1; later terms of the
    # sum beyond the horizon are too small to change it (see _RESID_HORIZON).
    depth = np.minimum(num_ret, num_judged + 1 + _RESID_HORIZON)
    starts = np.zeros(hits.num_queries + 1, dtype=np.int64)
    np.cumsum(depth, out=starts[1:])
    owner = np.repeat(np.arange(hits.num_queries, dtype=np.int64), depth)
    position = np.arange(int(starts[-1]), dtype=np.int64) - starts[owner]  # rank - 1
    unjudged = np.ones(position.size, dtype=bool)
    inside = judged_rank <= depth[judged_query]
    unjudged[starts[judged_query[inside]] + judged_rank[inside] - 1] = False
    powers = _powers(int(num_ret.max(initial=0)))
    total = np.bincount(
        owner[unjudged], weights=powers[position[unjudged]], minlength=hits.num_queries
    )
    out = powers[num_ret] + (1.0 - RBP_PERSISTENCE) * total
    out[num_ret <= num_judged] = 0.0
    return out


def _integer_running_sums(query: IntArray, values: FloatArray) -> FloatArray:
    """Running sums of whole numbers per query (exact, so a global cumsum is enough)."""
    whole = values.astype(np.int64)
    running = np.cumsum(whole)
    if running.size == 0:
        return running.astype(np.float64)
    first = np.ones(query.size, dtype=bool)
    first[1:] = query[1:] != query[:-1]
    starts = np.flatnonzero(first)
    before = np.repeat(running[starts] - whole[starts], np.diff(np.append(starts, query.size)))
    return (running - before).astype(np.float64)
