"""Checks on what the user's own system returns, so its bugs surface as clear errors.

Whatever the system answers, the rest of the pipeline gets the same guarantees
as from a built-in retriever: unique documents, at most ``k``, ordered by score
with ties broken by document id, a non-negative cost of at most ``MAX_QUERY_COST_USD``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable

from retrieval_eval.errors import RetrievalEvalError
from retrieval_eval.retrieval.base import Hit, SearchResult

# No query costs a million dollars; a larger cost_usd is a unit or accounting bug, and
# summing values near the float maximum (1e308) overflows.
MAX_QUERY_COST_USD = 1_000_000.0
# The longest answer read from an external system (one JSON line from a command or a hosted
# factory, one HTTP body): 256 MiB. The largest answers the test suite reads as legitimate,
# two million hits in one line, take 83 MB; a line that never ends must fail with the
# retriever's name before it takes the machine's memory, not after. A fixed limit for now.
MAX_ANSWER_BYTES = 1 << 28


def normalise_hits(hits: Iterable[Hit], k: int, *, cost_usd: float, who: str) -> SearchResult:
    """Order by score (ties by id), keep each document's best hit, cut to ``k``."""
    top = TopHits(k, who=who)
    for position, hit in enumerate(hits):
        top.add(position, hit)
    return top.result(cost_usd)


class TopHits:
    """The best ``k`` distinct documents among hits fed one at a time, each checked.

    Only a bounded buffer is held, however many hits arrive: when it fills, it is
    cut back to the current top ``k`` (a document cut then can only come back with
    a better hit, so the final answer is the same as sorting everything).
    """

    def __init__(self, k: int, *, who: str) -> None:
        self.k = max(k, 0)
        self.who = who
        self._buffer: list[Hit] = []
        self._limit = max(4 * self.k, 4096)
        # The k-th best score after the last cut: a lower score can never make the top k,
        # so such a hit is checked and dropped without being kept.
        self._floor = -math.inf

    def add(self, position: int, hit: object) -> None:
        who = self.who
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
            or not finite(hit.score)
        ):
            raise RetrievalEvalError(
                f"{who}: hit {position} ({hit.doc_id}) has score {hit.score!r}; "
                "scores must be finite numbers"
            )
        if not isinstance(hit.text, str):
            raise RetrievalEvalError(f"{who}: hit {position} ({hit.doc_id}) has non-text `text`")
        self.keep(hit.doc_id, float(hit.score), hit.text)

    def add_answer(self, position: int, raw: object) -> None:
        """One element of a JSON ``hits`` array, as the JSON-lines protocol sends it."""
        if not isinstance(raw, dict) or "id" not in raw or "score" not in raw:
            raise RetrievalEvalError(
                f"{self.who}: hit {position} must be an object with `id` and `score`, "
                f"got {_short(raw)}"
            )
        score = raw["score"]
        if type(score) is float and score < self._floor:  # the common case, made cheap
            doc_id = raw["id"]
            if isinstance(doc_id, str) and doc_id and isinstance(raw.get("text", ""), str):
                return
        self.add(position, Hit(doc_id=raw["id"], score=score, text=raw.get("text", "")))

    def keep(self, doc_id: str, score: float, text: str) -> None:
        if score < self._floor:
            return
        self._buffer.append(Hit(doc_id, score, text))
        if len(self._buffer) >= self._limit:
            self._buffer = self._best()
            if len(self._buffer) == self.k and self.k > 0:
                self._floor = self._buffer[-1].score

    def result(self, cost_usd: object) -> SearchResult:
        return SearchResult(hits=tuple(self._best()), cost_usd=checked_cost(cost_usd, self.who))

    def _best(self) -> list[Hit]:
        self._buffer.sort(key=lambda hit: (-hit.score, hit.doc_id))
        seen: set[str] = set()
        unique: list[Hit] = []
        for hit in self._buffer:
            if len(unique) == self.k:  # before adding: k = 0 keeps nothing
                break
            if hit.doc_id not in seen:
                seen.add(hit.doc_id)
                unique.append(hit)
        return unique


def checked_cost(cost_usd: object, who: str) -> float:
    """``cost_usd`` as a float, or an error naming ``who`` when it is no plausible cost."""
    if (
        isinstance(cost_usd, bool)
        or not isinstance(cost_usd, int | float)
        # Comparisons, not math.isfinite: NaN fails them, and a JSON integer too large
        # for a float would make isfinite raise.
        or not 0 <= cost_usd <= MAX_QUERY_COST_USD
    ):
        raise RetrievalEvalError(
            f"{who}: cost_usd must be a number from 0 to {MAX_QUERY_COST_USD:,.0f} "
            f"(USD per query; got {cost_usd!r})"
        )
    return float(cost_usd)


def finite(score: int | float) -> bool:
    """Whether a number is finite; False, not OverflowError, for an integer beyond any
    float (JSON integers have no size limit)."""
    try:
        return math.isfinite(score)
    except OverflowError:
        return False


def _short(value: object) -> str:
    text = json.dumps(value, default=str)
    return text if len(text) <= 200 else text[:197] + "..."
