"""Convex combination of normalised scores: α·dense + (1 − α)·lexical.

Both runs are normalised first (``normalise.py``); a document one side did not
return gets that side's lowest possible normalised value for the run. With
α = 1 the ranking is the first side's, with α = 0 the second's.
"""

from __future__ import annotations

from collections.abc import Mapping

from retrieval_eval.retrieval.fusion.candidates import Candidates, FloatArray
from retrieval_eval.retrieval.fusion.normalise import NORMALISATIONS
from retrieval_eval.retrieval.fusion.run import Run


def convex_scores(
    candidates: Candidates,
    *,
    first: str,
    second: str,
    alpha: float,
    normalisation: str,
    floors: Mapping[str, float],
    ceilings: Mapping[str, float | None],
) -> FloatArray:
    """Each candidate's α·norm(first) + (1 − α)·norm(second); ``floors`` feed
    theoretical-min and theoretical, ``ceilings`` (absent or None: unknown) theoretical.
    A side absent from ``candidates`` counts as an empty run."""
    if not 0.0 <= alpha <= 1.0:
        raise ValueError(f"alpha must be between 0 and 1, got {alpha}")
    normalise = NORMALISATIONS.get(normalisation)
    if normalise is None:
        raise ValueError(
            f"unknown normalisation {normalisation!r}; choose one of {', '.join(NORMALISATIONS)}"
        )
    a = candidates.normalised(
        first, normalisation, normalise, floors.get(first, 0.0), ceilings.get(first)
    )
    b = candidates.normalised(
        second, normalisation, normalise, floors.get(second, 0.0), ceilings.get(second)
    )
    return alpha * a + (1.0 - alpha) * b


def convex(
    first: Run,
    second: Run,
    *,
    alpha: float,
    normalisation: str,
    floors: tuple[float, float] = (0.0, 0.0),
    ceilings: tuple[float | None, float | None] = (None, None),
) -> list[tuple[str, float]]:
    """α·norm(first) + (1 − α)·norm(second) as a fused run."""
    return convex_sides(
        {"first": first, "second": second},
        first="first",
        second="second",
        alpha=alpha,
        normalisation=normalisation,
        floors={"first": floors[0], "second": floors[1]},
        ceilings={"first": ceilings[0], "second": ceilings[1]},
    )


def convex_sides(
    runs: Mapping[str, Run],
    *,
    first: str,
    second: str,
    alpha: float,
    normalisation: str,
    floors: Mapping[str, float],
    ceilings: Mapping[str, float | None] | None = None,
) -> list[tuple[str, float]]:
    """``convex`` over two named sides of ``runs`` (a side absent from ``runs`` is empty)."""
    candidates = Candidates.of({side: runs[side] for side in (first, second) if side in runs})
    scores = convex_scores(
        candidates,
        first=first,
        second=second,
        alpha=alpha,
        normalisation=normalisation,
        floors=floors,
        ceilings=ceilings or {},
    )
    return candidates.ranked(scores)
