"""Checks on what the user's own system returns, so its bugs surface as clear errors.

Whatever the system answers, the rest of the pipeline gets the same guarantees
as from a built-in retriever: unique documents, at most ``k``, ordered by score
with ties broken by document id, a finite non-negative cost.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from retrieval_eval.errors import RetrievalEvalError
from retrieval_eval.retrieval.base import Hit, SearchResult


def normalise_hits(hits: Iterable[Hit], k: int, *, cost_usd: float, who: str) -> SearchResult:
    """Order by score (ties by id), keep each document's best hit, cut to ``k``."""
    checked: list[Hit] = []
    for position, hit in enumerate(hits):
        if not isinstance(hit, Hit):
            raise RetrievalEvalError(
                f"{who}: hit {position} is a {type(hit).__name__}, expected a Hit"
            )
        if not isinstance(hit.doc_id, str) or not hit.doc_id:
            raise RetrievalEvalError(
                f"{who}: hit {position} has no document id (got {hit.doc_id!r})"
            )
        if (
            isinstance(hit.score, bool)
            or not isinstance(hit.score, int | float)
            or not math.isfinite(hit.score)
        ):
            raise RetrievalEvalError(
                f"{who}: hit {position} ({hit.doc_id}) has score {hit.score!r}; "
                "scores must be finite numbers"
            )
        if not isinstance(hit.text, str):
            raise RetrievalEvalError(f"{who}: hit {position} ({hit.doc_id}) has non-text `text`")
        checked.append(Hit(hit.doc_id, float(hit.score), hit.text))
    if (
        isinstance(cost_usd, bool)
        or not isinstance(cost_usd, int | float)
        or not math.isfinite(cost_usd)
        or cost_usd < 0
    ):
        raise RetrievalEvalError(f"{who}: cost_usd must be a finite number >= 0 (got {cost_usd!r})")
    checked.sort(key=lambda hit: (-hit.score, hit.doc_id))
    seen: set[str] = set()
    unique: list[Hit] = []
    for hit in checked:
        if hit.doc_id not in seen:
            seen.add(hit.doc_id)
            unique.append(hit)
    return SearchResult(hits=tuple(unique[: max(k, 0)]), cost_usd=float(cost_usd))
