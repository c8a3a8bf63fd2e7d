"""Score normalisations for score-based fusion: one run's scores → comparable values.

- ``min-max``: (s − min) / (max − min) over the run; all-equal scores become 1.
- ``z-score``: (s − mean) / standard deviation over the run; all-equal scores become 0.
- ``theoretical-min``: (s − floor) / (max − floor), where ``floor`` is the lowest
  score the scoring function can give (0 for BM25, −1 for cosine similarity)
  instead of the lowest score observed. Bruch, Gai and Ingber ("An Analysis of
  Fusion Functions for Hybrid Retrieval", ACM TOIS 2023) found it more robust than
  min-max and RRF: the observed minimum of a top-k list moves with k and with the
  query, the function's floor does not.
- ``theoretical``: (s − floor) / (ceiling − floor), both bounds the scoring
  function's own: ``ceiling`` is the highest score any document could reach for
  this query (1 for cosine similarity; for BM25 the score of a document matching
  every query term with unbounded term frequency, Σ idf). Every other
  normalisation divides by the run's observed best, so a run whose best hit is a
  weak partial match (a paraphrase that shares one common word with it) hands
  that hit full confidence; here it keeps the small share of the query it
  matched. Without a ceiling (None) the run's best score stands in for it. A
  document the run did not return counts as 0 (the floor) when the run holds
  every document the side scored (it is shorter than the depth asked for: BM25
  returned every match), and as the run's lowest value when the run was ``cut``
  at the depth: that document scored at most the lowest.

Each takes the run, the scoring function's floor and, where known, its ceiling
for this query, and whether the run was cut at the depth asked for; each returns
the normalised scores and the value a document the run did not return counts as.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from retrieval_eval.retrieval.fusion.run import Run

Normalised = tuple[dict[str, float], float]


def min_max(run: Run, floor: float, ceiling: float | None = None, cut: bool = False) -> Normalised:
    if not run:
        return {}, 0.0
    values = [score for _, score in run]
    low, high = min(values), max(values)
    if high == low:
        return {doc_id: 1.0 for doc_id, _ in run}, 0.0
    span = high - low
    return {doc_id: (score - low) / span for doc_id, score in run}, 0.0


def z_score(run: Run, floor: float, ceiling: float | None = None, cut: bool = False) -> Normalised:
    if not run:
        return {}, 0.0
    values = [score for _, score in run]
    mean = sum(values) / len(values)
    deviation = math.sqrt(sum((v - mean) ** 2 for v in values) / len(values))
    if deviation == 0:
        return {doc_id: 0.0 for doc_id, _ in run}, 0.0
    normalised = {doc_id: (score - mean) / deviation for doc_id, score in run}
    return normalised, min(normalised.values())


def theoretical_min(
    run: Run, floor: float, ceiling: float | None = None, cut: bool = False
) -> Normalised:
    if not run:
        return {}, 0.0
    high = max(score for _, score in run)
    if high <= floor:
        return {doc_id: 0.0 for doc_id, _ in run}, 0.0
    span = high - floor
    return {doc_id: (score - floor) / span for doc_id, score in run}, 0.0


def theoretical(
    run: Run, floor: float, ceiling: float | None = None, cut: bool = False
) -> Normalised:
    if not run:
        return {}, 0.0
    high = max(score for _, score in run) if ceiling is None else ceiling
    if high <= floor:
        return {doc_id: 0.0 for doc_id, _ in run}, 0.0
    span = high - floor
    # Clipped: a score past a ceiling computed in another precision stays at 1.
    normalised = {doc_id: min(max((score - floor) / span, 0.0), 1.0) for doc_id, score in run}
    return normalised, min(normalised.values()) if cut else 0.0


Normalise = Callable[[Run, float, float | None, bool], Normalised]
NORMALISATIONS: dict[str, Normalise] = {
    "min-max": min_max,
    "z-score": z_score,
    "theoretical-min": theoretical_min,
    "theoretical": theoretical,
}
