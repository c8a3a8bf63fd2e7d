"""Per-query values of every measure, vectorised over all queries at once.

Definitions follow trec_eval (checked against pytrec_eval, trec_eval's own C code, in
tests/tools/trec):

- ``p@k``      relevant in the top k, divided by k even if fewer were returned.
- ``recall@k`` relevant in the top k / relevant judged.
- ``hit_rate@k`` 1 if any relevant document is in the top k.
- ``mrr@k``    1 / rank of the first relevant document if it is within the top k;
  ``mrr`` (no k) is trec_eval's ``recip_rank``, uncut.
- ``map@k``    sum of precision at each relevant rank <= k, divided by all relevant
  judged (trec_eval's ``map_cut``; not by min(k, R)); ``map`` is uncut.
- ``ndcg@k``   sum of grade / log2(rank + 1) over the top k, over the same for the
  ideal ordering of all judged relevant grades (trec_eval's ``ndcg_cut``).
- ``r_precision`` relevant in the top R / R, R = relevant judged.
Queries with nothing relevant score 0 on every measure, as in trec_eval.
"""

from __future__ import annotations

import numpy as np

from retrieval_eval.score.ranked import FloatArray, IntArray, RankedHits

# Every kernel takes the ranked hits and the cut-off (None: the whole ranking) and gives
# one value per query; score/measure_names.py names which kernel each measure uses.


def num_q(hits: RankedHits, k: int | None) -> FloatArray:
    return np.ones(hits.num_queries, dtype=np.float64)


def num_ret(hits: RankedHits, k: int | None) -> FloatArray:
    return hits.num_ret.astype(np.float64)


def num_rel(hits: RankedHits, k: int | None) -> FloatArray:
    return hits.num_rel.astype(np.float64)


def num_rel_ret(hits: RankedHits, k: int | None) -> FloatArray:
    return _count(hits, hits.hit_rank >= 1)


def precision(hits: RankedHits, k: int | None) -> FloatArray:
    assert k is not None
    return _count(hits, hits.hit_rank <= k) / k


def recall(hits: RankedHits, k: int | None) -> FloatArray:
    assert k is not None
    return _per_relevant(hits, _count(hits, hits.hit_rank <= k))


def hit_rate(hits: RankedHits, k: int | None) -> FloatArray:
    assert k is not None
    return (_count(hits, hits.hit_rank <= k) > 0).astype(np.float64)


def r_precision(hits: RankedHits, k: int | None) -> FloatArray:
    within_r = hits.hit_rank <= hits.num_rel[hits.hit_query]
    return _per_relevant(hits, _count(hits, within_r))


def reciprocal_rank(hits: RankedHits, k: int | None) -> FloatArray:
    first = _first_hit_mask(hits.hit_query)
    if k is not None:
        first &= hits.hit_rank <= k
    out = np.zeros(hits.num_queries, dtype=np.float64)
    out[hits.hit_query[first]] = 1.0 / hits.hit_rank[first]
    return out


def _count(hits: RankedHits, mask: np.ndarray) -> FloatArray:
    counts = np.bincount(hits.hit_query[mask], minlength=hits.num_queries)
    return counts.astype(np.float64)


def _per_relevant(hits: RankedHits, numerator: FloatArray) -> FloatArray:
    out = np.zeros(hits.num_queries, dtype=np.float64)
    np.divide(numerator, hits.num_rel, out=out, where=hits.num_rel > 0)
    return out


def _first_hit_mask(hit_query: IntArray) -> np.ndarray:
    first = np.ones(hit_query.size, dtype=bool)
    first[1:] = hit_query[1:] != hit_query[:-1]
    return first


def average_precision(hits: RankedHits, k: int | None) -> FloatArray:
    # i-th relevant document of its query (1-based), from the (query, rank) order.
    first = _first_hit_mask(hits.hit_query)
    starts = np.flatnonzero(first)
    position = np.arange(hits.hit_query.size, dtype=np.int64)
    nth = position - np.repeat(starts, np.diff(np.append(starts, hits.hit_query.size))) + 1
    precision = nth / hits.hit_rank
    if k is not None:
        precision = np.where(hits.hit_rank <= k, precision, 0.0)
    summed = np.bincount(hits.hit_query, weights=precision, minlength=hits.num_queries)
    return _per_relevant(hits, summed.astype(np.float64))


def ndcg(hits: RankedHits, k: int | None) -> FloatArray:
    assert k is not None
    within = hits.hit_rank <= k
    gains = hits.hit_gain[within] / np.log2(hits.hit_rank[within] + 1.0)
    dcg = np.bincount(hits.hit_query[within], weights=gains, minlength=hits.num_queries)
    counts = np.diff(hits.ideal_offsets)
    ideal_query = np.repeat(np.arange(hits.num_queries, dtype=np.int64), counts)
    ideal_rank = (
        np.arange(hits.ideal_gains.size, dtype=np.int64) - hits.ideal_offsets[ideal_query] + 1
    )
    keep = ideal_rank <= k
    ideal_weights = hits.ideal_gains[keep] / np.log2(ideal_rank[keep] + 1.0)
    idcg = np.bincount(ideal_query[keep], weights=ideal_weights, minlength=hits.num_queries)
    out = np.zeros(hits.num_queries, dtype=np.float64)
    np.divide(dcg, idcg, out=out, where=idcg > 0)
    return out
