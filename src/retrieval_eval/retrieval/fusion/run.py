"""The value every fusion function takes and returns: a ranked run."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from operator import itemgetter

# (doc_id, score), best first; each document at most once.
Run = Sequence[tuple[str, float]]


def ordered(scores: Mapping[str, float]) -> list[tuple[str, float]]:
    """Fused scores as a run: highest first, equal scores by document id ascending.

    Two stable sorts (by id, then by score descending; ``reverse`` keeps stability)
    instead of one on (−score, id) tuples: tune re-fuses every query per grid point,
    and building a tuple per document was most of the cost."""
    by_id = sorted(scores.items(), key=itemgetter(0))
    return sorted(by_id, key=itemgetter(1), reverse=True)
