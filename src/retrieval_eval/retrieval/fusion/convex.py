"""Convex combination of normalised scores: α·dense + (1 − α)·lexical.

Both runs are normalised first (``normalise.py``); a document one side did not
return gets that side's lowest possible normalised value for the run. With
α = 1 the ranking is the first side's, with α = 0 the second's.
"""

from __future__ import annotations

from collections.abc import Mapping

from retrieval_eval.retrieval.fusion.normalise import NORMALISATIONS
from retrieval_eval.retrieval.fusion.run import Run, ordered


def convex(
    first: Run,
    second: Run,
    *,
    alpha: float,
    normalisation: str,
    floors: tuple[float, float] = (0.0, 0.0),
    ceilings: tuple[float | None, float | None] = (None, None),
) -> list[tuple[str, float]]:
    """α·norm(first) + (1 − α)·norm(second); ``floors`` feed theoretical-min and
    theoretical, ``ceilings`` (None: unknown) theoretical."""
    if not 0.0 <= alpha <= 1.0:
        raise ValueError(f"alpha must be between 0 and 1, got {alpha}")
    normalise = NORMALISATIONS.get(normalisation)
    if normalise is None:
        raise ValueError(
            f"unknown normalisation {normalisation!r}; choose one of {', '.join(NORMALISATIONS)}"
        )
    a, a_missing = normalise(first, floors[0], ceilings[0])
    b, b_missing = normalise(second, floors[1], ceilings[1])
    fused: dict[str, float] = {}
    for doc_id in a.keys() | b.keys():
        fused[doc_id] = alpha * a.get(doc_id, a_missing) + (1.0 - alpha) * b.get(doc_id, b_missing)
    return ordered(fused)


def convex_sides(
    runs: Mapping[str, Run],
    *,
    first: str,
    second: str,
    alpha: float,
    normalisation: str,
    floors: Mapping[str, float],
    ceilings: Mapping[str, float | None],
) -> list[tuple[str, float]]:
    """``convex`` over two named sides of ``runs`` (a side absent from ``runs`` is empty)."""
    return convex(
        runs.get(first, ()),
        runs.get(second, ()),
        alpha=alpha,
        normalisation=normalisation,
        floors=(floors.get(first, 0.0), floors.get(second, 0.0)),
        ceilings=(ceilings.get(first), ceilings.get(second)),
    )
