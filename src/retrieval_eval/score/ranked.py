"""The flat form every measure is computed from: where the relevant documents landed.

Every measure we support depends on a ranking only through the ranks and grades
of its relevant documents, plus per-query counts. So both entry points (Python
mappings and TREC files) reduce their input to these few flat arrays, and the
kernels in ``kernels.py`` never loop over queries in Python.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import compress

import numpy as np

from retrieval_eval.tools.trec.text.values import FloatArray as FloatArray
from retrieval_eval.tools.trec.text.values import IntArray as IntArray


@dataclass(frozen=True)
class RankedHits:
    """Relevant documents' ranks for ``len(query_ids)`` queries (grade >= 1 is relevant).

    ``hit_*`` arrays are sorted by (query, rank); ``ideal_gains`` holds each query's
    relevant grades, highest first, at ``ideal_offsets[q]:ideal_offsets[q + 1]``.
    """

    query_ids: Sequence[str]
    num_ret: IntArray
    num_rel: IntArray
    hit_query: IntArray
    hit_rank: IntArray
    hit_gain: FloatArray
    ideal_offsets: IntArray
    ideal_gains: FloatArray

    @property
    def num_queries(self) -> int:
        return len(self.query_ids)


def ideal_from_grades(
    query_index: IntArray, grades: IntArray, num_queries: int
) -> tuple[IntArray, IntArray, FloatArray]:
    """(num_rel, ideal_offsets, ideal_gains) from the relevant (grade >= 1) judgments."""
    keep = grades >= 1
    query_index, grades = query_index[keep], grades[keep]
    order = np.lexsort((-grades, query_index))
    num_rel = np.bincount(query_index, minlength=num_queries).astype(np.int64)
    offsets = np.zeros(num_queries + 1, dtype=np.int64)
    np.cumsum(num_rel, out=offsets[1:])
    return num_rel, offsets, grades[order].astype(np.float64)


def from_mappings(
    qrels: Mapping[str, Mapping[str, int]],
    rankings: Mapping[str, Sequence[str]],
    query_ids: Sequence[str],
) -> RankedHits:
    """Build hits for ``query_ids`` from already-ranked lists (best first).

    A document repeated in a ranking earns credit only at its first position; the
    later copies still occupy their ranks, as they would on a user's screen.
    """
    num_queries = len(query_ids)
    num_ret = np.zeros(num_queries, dtype=np.int64)
    hit_query: list[int] = []
    hit_rank: list[int] = []
    hit_gain: list[int] = []
    judged_query: list[int] = []
    judged_grade: list[int] = []
    for index, qid in enumerate(query_ids):
        judgments = qrels.get(qid, {})
        relevant = {doc: grade for doc, grade in judgments.items() if grade >= 1}
        judged_query.extend([index] * len(relevant))
        judged_grade.extend(relevant.values())
        ranking = rankings.get(qid, ())
        num_ret[index] = len(ranking)
        if not relevant or not ranking:
            continue
        # C-level scan: positions whose document is relevant, without a Python loop per doc.
        positions = list(compress(range(len(ranking)), map(relevant.__contains__, ranking)))
        docs = [ranking[p] for p in positions]
        if len(set(docs)) != len(docs):
            first: dict[str, int] = {}
            for position, doc in zip(positions, docs, strict=True):
                first.setdefault(doc, position)
            positions = sorted(first.values())
            docs = [ranking[p] for p in positions]
        hit_query.extend([index] * len(positions))
        hit_rank.extend(p + 1 for p in positions)
        hit_gain.extend(relevant[doc] for doc in docs)
    num_rel, offsets, ideal = ideal_from_grades(
        np.asarray(judged_query, dtype=np.int64),
        np.asarray(judged_grade, dtype=np.int64),
        num_queries,
    )
    return RankedHits(
        query_ids=tuple(query_ids),
        num_ret=num_ret,
        num_rel=num_rel,
        hit_query=np.asarray(hit_query, dtype=np.int64),
        hit_rank=np.asarray(hit_rank, dtype=np.int64),
        hit_gain=np.asarray(hit_gain, dtype=np.float64),
        ideal_offsets=offsets,
        ideal_gains=ideal,
    )
