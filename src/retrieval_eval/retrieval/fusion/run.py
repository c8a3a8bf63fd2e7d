"""The value every fusion function takes and returns: a ranked run."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

# (doc_id, score), best first; each document at most once.
Run = Sequence[tuple[str, float]]


def ordered(scores: Mapping[str, float]) -> list[tuple[str, float]]:
    """Fused scores as a run: highest first, equal scores by document id ascending."""
    return sorted(scores.items(), key=lambda item: (-item[1], item[0]))
