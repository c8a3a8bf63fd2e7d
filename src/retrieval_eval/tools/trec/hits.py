"""Where a run's judged documents landed, per query: what every trec_eval measure needs.

trec_eval sorts each query's results (score descending, ties by document id
descending), cuts the list at ``-M`` documents, and then looks only at the
relevance value of each rank: a grade from the qrels, "in the pool but unjudged"
(a negative grade in the qrels) or "not in the pool" (absent from the qrels).
So the judged documents' ranks and grades, the number retrieved, and each query's
judgments are enough for every measure; the unjudged lines of the run never need
to be kept.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from retrieval_eval.score.ranked import IntArray, RankedHits, ideal_from_grades


@dataclass(frozen=True)
class TrecHits:
    """Judged retrieved documents of ``query_ids`` (sorted by query, then rank).

    ``judged_*`` describe retrieved documents that appear in the qrels, ranks
    within the ``-M`` cut; ``qrels_query``/``qrels_grade`` hold every judgment of
    the selected queries. ``runid`` is the run's tag as trec_eval prints it.
    """

    query_ids: Sequence[str]
    num_ret: IntArray
    judged_query: IntArray
    judged_rank: IntArray
    judged_grade: IntArray
    qrels_query: IntArray
    qrels_grade: IntArray
    runid: str
    _ranked: dict[int, RankedHits] = field(default_factory=dict, compare=False, repr=False)

    @property
    def num_queries(self) -> int:
        return len(self.query_ids)

    def num_at_or_above(self, level: int) -> IntArray:
        """Judgments per query with a grade of at least ``level``."""
        keep = self.qrels_grade >= level
        return np.bincount(self.qrels_query[keep], minlength=self.num_queries).astype(np.int64)

    def ranked(self, level: int) -> RankedHits:
        """Hits for the measures that only need relevant documents (grade >= ``level``).

        Gains and the ideal ranking always use the grades themselves (trec_eval's
        ndcg ignores the relevance level), so ``hit_gain`` is the grade.
        """
        cached = self._ranked.get(level)
        if cached is not None:
            return cached
        relevant = self.judged_grade >= level
        _, offsets, ideal = ideal_from_grades(self.qrels_query, self.qrels_grade, self.num_queries)
        hits = RankedHits(
            query_ids=self.query_ids,
            num_ret=self.num_ret,
            num_rel=self.num_at_or_above(level),
            hit_query=self.judged_query[relevant],
            hit_rank=self.judged_rank[relevant],
            hit_gain=self.judged_grade[relevant].astype(np.float64),
            ideal_offsets=offsets,
            ideal_gains=ideal,
        )
        self._ranked[level] = hits
        return hits
