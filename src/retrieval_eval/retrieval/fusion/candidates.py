"""The candidates of one query's fusion as arrays: the form every fusion computes on.

The sides' runs are gathered once into the union of their documents, sorted by
id, with each side's hits' positions in it. A fusion function is
then a few array operations giving one fused score per candidate, and the
ranking is one stable sort by score (descending), which leaves equal scores in
id order — the tie rule every retriever follows. ``tune`` builds this table once
per query and evaluates every grid point on it; the hybrid retriever builds it
for its one setting. Both run the same code, so a tuned setting ranks in ``run``
exactly as it did in ``tune``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from retrieval_eval.retrieval.fusion.normalise import Normalise
from retrieval_eval.retrieval.fusion.run import Run

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]


@dataclass(frozen=True)
class Side:
    run: Run
    positions: IntArray  # each hit's index in Candidates.ids, in run order
    cut: bool  # the run reached the depth asked for: documents past it may score too


@dataclass
class Candidates:
    ids: list[str]  # every document any side returned, ascending
    sides: dict[str, Side]
    _normalised: dict[tuple[str, str, float, float | None], FloatArray] = field(
        default_factory=dict
    )

    @classmethod
    def of(cls, runs: Mapping[str, Run], depth: int | None = None) -> Candidates:
        """``depth``: how many documents each side was asked for (None: each run holds
        every document its side scored)."""
        ids = sorted({doc_id for run in runs.values() for doc_id, _ in run})
        where = {doc_id: index for index, doc_id in enumerate(ids)}
        sides = {
            name: Side(
                run=run,
                positions=np.fromiter((where[d] for d, _ in run), dtype=np.int64, count=len(run)),
                cut=depth is not None and len(run) >= depth,
            )
            for name, run in runs.items()
        }
        return cls(ids=ids, sides=sides)

    def spread(self, side: str, values: FloatArray, missing: float) -> FloatArray:
        """Per-hit ``values`` of ``side`` placed over all candidates; the rest get ``missing``."""
        out = np.full(len(self.ids), missing, dtype=np.float64)
        if side in self.sides:
            out[self.sides[side].positions] = values
        return out

    def normalised(
        self,
        side: str,
        name: str,
        normalise: Normalise,
        floor: float,
        ceiling: float | None,
    ) -> FloatArray:
        """``side``'s scores normalised over all candidates, computed once per setting."""
        key = (side, name, floor, ceiling)
        cached = self._normalised.get(key)
        if cached is None:
            known = self.sides.get(side)
            run = known.run if known is not None else ()
            cut = known.cut if known is not None else False
            values, missing = normalise(run, floor, ceiling, cut)
            per_hit = np.fromiter((values[d] for d, _ in run), dtype=np.float64, count=len(run))
            cached = self.spread(side, per_hit, missing)
            self._normalised[key] = cached
        return cached

    def order(self, scores: FloatArray) -> IntArray:
        """Candidate indices by score descending, equal scores by id ascending; along the
        last axis, so a matrix of settings × candidates is ranked row by row."""
        return np.argsort(-scores, axis=-1, kind="stable")

    def ranked(self, scores: FloatArray) -> list[tuple[str, float]]:
        """The fused run for one setting's ``scores``."""
        return [(self.ids[i], float(scores[i])) for i in self.order(scores)]

    def top_ids(self, scores: FloatArray, k: int) -> list[list[str]]:
        """Each row's best ``k`` document ids, for a matrix of settings × candidates."""
        ids = self.ids
        return [[ids[i] for i in row] for row in self.order(scores)[:, :k].tolist()]
