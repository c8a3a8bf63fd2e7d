"""One query's answer from a command or a factory's process, checked and cut to ``k``.

Two forms say the same thing (docs/retrievers.md):

    {"hits": [{"id": "a", "score": 2.0, "text": "..."}, ...], "cost_usd": 0.0}
    {"ids": ["a", ...], "scores": [2.0, ...], "texts": ["...", ...], "cost_usd": 0.0}

The second (columns, ``texts`` optional) is what the factory host sends: it costs
less to encode and decode, and a parsed answer is checked a column at a time
(the C loops of ``set``, ``map`` and ``sorted`` instead of a Python loop per hit).
Whenever that bulk check finds anything wrong, the hits are checked again one at
a time by ``TopHits``, whose first complaint is the error, so both forms and both
ways of reading (parsed whole, or streamed by answer_reader.py) fail alike.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from retrieval_eval.errors import RetrievalEvalError
from retrieval_eval.retrieval.answers import MAX_QUERY_COST_USD, TopHits, checked_cost
from retrieval_eval.retrieval.base import Hit, SearchResult

HITS = "hits"
IDS, SCORES, TEXTS = "ids", "scores", "texts"
COLUMNS = (IDS, SCORES, TEXTS)
_STR = frozenset({str})
_DICT = frozenset({dict})
_NUMBER = frozenset({float, int})


def _hit_maker() -> Callable[[str, float, str], Hit]:
    """What makes the ``Hit``s of a checked answer. ``Hit(...)`` runs the frozen dataclass's
    ``__init__`` (three ``object.__setattr__`` calls): for ten hits a query that is the
    largest cost of reading an answer. Writing the instance's ``__dict__`` directly makes
    the same object (equal, same hash) in about a third of the time; ``Hit`` itself is
    used whenever that would not hold (other fields, ``__slots__``, a ``__post_init__``)."""
    names = [field.name for field in dataclasses.fields(Hit)]
    if (
        names != ["doc_id", "score", "text"]
        or "__slots__" in vars(Hit)
        or hasattr(Hit, "__post_init__")
    ):
        return Hit
    new = object.__new__

    def make(doc_id: str, score: float, text: str) -> Hit:
        hit: Hit = new(Hit)
        state = hit.__dict__
        state["doc_id"] = doc_id
        state["score"] = score
        state["text"] = text
        return hit

    return make


make_hit = _hit_maker()


class Streamed(list[Any]):
    """Stands in an answer for an array whose elements went straight to a ``TopHits``
    while the line was read (it stays empty; ``length`` is how many there were)."""

    def __init__(self, length: int = 0) -> None:
        super().__init__()
        self.length = length


def search_result(
    answer: Mapping[str, Any],
    k: int,
    who: Callable[[], str],
    top: TopHits | None = None,
) -> SearchResult:
    """The checked best ``k`` of one answer. ``top`` holds what was streamed into it while
    reading (when an array is ``Streamed``). Errors start with ``who()``, which is made
    only for an error (naming the query costs as much as checking its hits)."""
    fast = _fast(answer, k)
    if fast is not None:
        return SearchResult(hits=fast, cost_usd=_cost(answer.get("cost_usd", 0.0), who))
    return _checked(answer, k, who(), top)


def _fast(answer: Mapping[str, Any], k: int) -> tuple[Hit, ...] | None:
    """The best ``k`` of an answer parsed whole whose every value is as it should be, else
    None (``_checked`` then finds what is wrong, or reads what was streamed)."""
    if HITS in answer:
        raw_hits = answer[HITS]
        if type(raw_hits) is not list or not set(map(type, raw_hits)) <= _DICT:
            return None
        if COLUMNS[0] in answer or COLUMNS[1] in answer or COLUMNS[2] in answer:
            return None
        try:
            ids = [raw["id"] for raw in raw_hits]
            scores = [raw["score"] for raw in raw_hits]
        except KeyError:
            return None  # TopHits names the hit that lacks one
        return _best(ids, scores, [raw.get("text", "") for raw in raw_hits], k)
    columns, values, texts = answer.get(IDS), answer.get(SCORES), answer.get(TEXTS)
    if type(columns) is not list or type(values) is not list or len(columns) != len(values):
        return None
    if texts is not None and (type(texts) is not list or len(texts) != len(columns)):
        return None
    return _best(columns, values, texts, k)


def _cost(cost: object, who: Callable[[], str]) -> float:
    """``cost_usd`` as a float; ``who()`` is made only for an implausible one."""
    plain = isinstance(cost, float | int) and not isinstance(cost, bool)
    if plain and 0 <= cost <= MAX_QUERY_COST_USD:  # type: ignore[operator]
        return float(cost)  # type: ignore[arg-type]
    return checked_cost(cost, who())


def _checked(answer: Mapping[str, Any], k: int, who: str, top: TopHits | None) -> SearchResult:
    """Every check, one hit at a time: the error for a bad answer, or what was streamed."""
    raw_hits = answer.get(HITS)
    if any(column in answer for column in COLUMNS):
        if raw_hits is not None:
            raise RetrievalEvalError(
                f"{who} has both `hits` and `ids`/`scores`/`texts`; send one form"
            )
        return _columns_result(answer, k, who, top)
    if not isinstance(raw_hits, list):
        raise RetrievalEvalError(
            f"{who} lacks a `hits` list (or `ids` and `scores` lists): {_short(answer)}"
        )
    if not isinstance(raw_hits, Streamed):
        top = TopHits(k, who=who)
        for position, raw in enumerate(raw_hits):
            top.add_answer(position, raw)
    return (top or TopHits(k, who=who)).result(answer.get("cost_usd", 0.0))


def _columns_result(
    answer: Mapping[str, Any], k: int, who: str, top: TopHits | None
) -> SearchResult:
    ids, scores, texts = answer.get(IDS), answer.get(SCORES), answer.get(TEXTS)
    if not isinstance(ids, list) or not isinstance(scores, list):
        raise RetrievalEvalError(
            f"{who}: `ids` and `scores` must be lists, got {_kind(ids)} and {_kind(scores)}"
        )
    if texts is not None and not isinstance(texts, list):
        raise RetrievalEvalError(f"{who}: `texts` must be a list, got {_kind(texts)}")
    lengths = [_length(ids), _length(scores)] + ([] if texts is None else [_length(texts)])
    if len(set(lengths)) != 1:
        counted = f"{lengths[0]:,} ids and {lengths[1]:,} scores"
        if texts is not None:
            counted += f" and {lengths[2]:,} texts"
        raise RetrievalEvalError(f"{who} has {counted}; each hit needs one of each")
    if not isinstance(ids, Streamed):  # else answer_reader paired the columns into ``top``
        top = TopHits(k, who=who)
        for position, (doc_id, score) in enumerate(zip(ids, scores, strict=True)):
            top.add(position, Hit(doc_id, score, "" if texts is None else texts[position]))
    return (top or TopHits(k, who=who)).result(answer.get("cost_usd", 0.0))


def _best(
    ids: Sequence[Any], scores: Sequence[Any], texts: Sequence[Any] | None, k: int
) -> tuple[Hit, ...] | None:
    """The best ``k`` distinct documents, exactly as ``TopHits`` orders them (by score,
    ties by id, each document's first best hit); None when any value would fail its
    checks (``TopHits`` then names the first)."""
    if not set(map(type, ids)) <= _STR or not all(ids):
        return None
    types = set(map(type, scores))
    if not types <= _NUMBER:
        return None
    try:
        if not all(map(math.isfinite, scores)):
            return None
    except OverflowError:  # an integer beyond any float
        return None
    if int in types:  # ordered as floats, as TopHits keeps them (2**53 + 1 ties 2.0**53)
        scores = [float(score) for score in scores]
    if texts is not None and not set(map(type, texts)) <= _STR:
        return None
    # Two stable sorts: by id, then by score descending (which keeps the id order of ties).
    order = sorted(range(len(ids)), key=ids.__getitem__)
    order.sort(key=scores.__getitem__, reverse=True)
    limit = k if k > 0 else len(order)  # TopHits keeps every document when k is 0
    if len(set(ids)) != len(ids):
        seen: set[str] = set()
        unique = []
        for position in order:
            if ids[position] not in seen:
                seen.add(ids[position])
                unique.append(position)
        order = unique
    chosen = order[:limit]
    if texts is None:
        return tuple([make_hit(ids[n], scores[n], "") for n in chosen])
    return tuple([make_hit(ids[n], scores[n], texts[n]) for n in chosen])


def _length(column: list[Any]) -> int:
    return column.length if isinstance(column, Streamed) else len(column)


def _kind(value: object) -> str:
    """What a JSON value is, as an error names it."""
    if value is None:
        return "null (or nothing)"
    if isinstance(value, bool):
        return "true/false"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "text"
    return "a list" if isinstance(value, list) else "an object"


def _short(value: object) -> str:
    text = json.dumps(value, default=str)
    return text if len(text) <= 200 else text[:197] + "..."
