"""Read one large JSON answer line, handing its hits to a ``TopHits`` one by one.

``json.loads`` would build every hit of an answer before any could be dropped:
two million hit objects cost over a gigabyte. Here the top-level object is
walked with the ``json`` module's own decoder, and each element of a ``hits``
array goes to the answer's ``TopHits`` (which keeps only the best ``k``) as
soon as it is decoded. An answer in columns (``ids``, ``scores``, optional
``texts``: search_answer.py) is read twice over the same text: once to count
each column, skipping its elements, then the columns side by side, one hit
(id, score, text) at a time, so no column is ever held whole. A batch line
(``{"answers": [answer, ...]}``, all of a `search_many` request's answers) has
each answer read so, each with the ``TopHits`` of its own query. Anything else
parses exactly as ``json.loads`` would; the arrays streamed are left in the
answer as ``Streamed`` markers for search_answer.py's checks.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from retrieval_eval.retrieval.answers import TopHits
from retrieval_eval.retrieval.base import Hit
from retrieval_eval.retrieval.external.search_answer import (
    COLUMNS,
    HITS,
    IDS,
    SCORES,
    TEXTS,
    Streamed,
)

BATCH = "answers"
_SPACE = re.compile(r"[ \t\n\r]*")
_WHITESPACE = " \t\n\r"
_DECODER = json.JSONDecoder()
_SCAN: Callable[[str, int], tuple[Any, int]] = _DECODER.scan_once  # type: ignore[attr-defined]

# value(key, offset, answer) -> the offset after the value it read into ``answer``, or None
# to have it decoded as usual.
_ValueHook = Callable[[str, int, dict[str, Any]], int | None]


def read_answer(text: str, top: TopHits) -> Any:
    """One query's answer, its hits fed to ``top``. Raises ``json.JSONDecodeError`` as
    ``json.loads`` would for malformed text."""
    at = _skip(text, 0)
    if not text.startswith("{", at):
        return json.loads(text)  # not an object: the caller says what it is instead
    answer, at = _answer(text, at, top)
    return _end(text, at, answer)


def read_batch(text: str, top: TopHits, top_of: Callable[[int], TopHits]) -> Any:
    """A `search_many` line: all its answers (``{"answers": [...]}``, answer N's hits fed
    to ``top_of(N)``), else the first query's answer alone (its hits fed to ``top``)."""
    at = _skip(text, 0)
    if not text.startswith("{", at):
        return json.loads(text)

    def batch(key: str, at: int, answer: dict[str, Any]) -> int | None:
        if key != BATCH or not text.startswith("[", at):
            return None
        answers: list[Any] = []

        def element(position: int, at: int) -> int:
            if text.startswith("{", at):
                each, at = _answer(text, at, top_of(position))
            else:
                each, at = _value(text, at)  # not an object: the caller says so
            answers.append(each)
            return at

        end = _array(text, at, element)
        answer[key] = answers
        return end

    answer, at = _answer(text, at, top, batch)
    return _end(text, at, answer)


class _Hits:
    """Reads an answer's ``hits`` into its ``TopHits`` and counts its columns (where each
    starts, and how many elements), for ``_pair`` once the whole object is known."""

    def __init__(self, text: str, top: TopHits, other: _ValueHook | None) -> None:
        self.text, self.top, self.other = text, top, other
        self.columns: dict[str, tuple[int, int]] = {}

    def __call__(self, key: str, at: int, answer: dict[str, Any]) -> int | None:
        text = self.text
        if self.other is not None:
            end = self.other(key, at, answer)
            if end is not None:
                return end
        if not text.startswith("[", at):
            return None
        if key == HITS:
            end = _array(text, at, self._feed)
            answer[key] = Streamed()
            return end
        if key in COLUMNS:
            counted = 0

            def skip(position: int, at: int) -> int:
                nonlocal counted
                counted = position + 1
                return _value(text, at)[1]

            end = _array(text, at, skip)
            self.columns[key] = (at, counted)
            answer[key] = Streamed(counted)
            return end
        return None

    def _feed(self, position: int, at: int) -> int:
        value, at = _value(self.text, at)
        self.top.add_answer(position, value)
        return at


def _answer(
    text: str, at: int, top: TopHits, other: _ValueHook | None = None
) -> tuple[dict[str, Any], int]:
    """The answer object at ``at`` and the offset after it; its hits went to ``top``
    (``other`` reads the values it wants before that)."""
    hits = _Hits(text, top, other)
    answer, end = _object(text, at, hits)
    texts = answer.get(TEXTS)
    if (
        HITS not in answer
        and isinstance(answer.get(IDS), Streamed)
        and isinstance(answer.get(SCORES), Streamed)
        and (texts is None or isinstance(texts, Streamed))
        and len({count for _, count in hits.columns.values()}) == 1
    ):
        _pair(text, hits.columns, top)
    return answer, end


def _pair(text: str, columns: dict[str, tuple[int, int]], top: TopHits) -> None:
    """Each hit from the columns side by side: one element of each per step."""
    (ids_at, count), (scores_at, _) = columns[IDS], columns[SCORES]
    texts_at = columns[TEXTS][0] if TEXTS in columns else None
    ids_at, scores_at = _skip(text, ids_at + 1), _skip(text, scores_at + 1)
    if texts_at is not None:
        texts_at = _skip(text, texts_at + 1)
    hit_text: Any = ""
    for position in range(count):
        doc_id, ids_at = _next(text, ids_at)
        score, scores_at = _next(text, scores_at)
        if texts_at is not None:
            hit_text, texts_at = _next(text, texts_at)
        top.add(position, Hit(doc_id, score, hit_text))


def _next(text: str, at: int) -> tuple[Any, int]:
    """The array element at ``at`` (already counted, so well formed) and the offset of the
    next one (past the comma)."""
    value, at = _SCAN(text, at)
    at = _skip(text, at)
    if text.startswith(",", at):
        at = _skip(text, at + 1)
    return value, at


def _value(text: str, at: int) -> tuple[Any, int]:
    try:
        return _SCAN(text, at)
    except StopIteration as stop:
        raise json.JSONDecodeError("Expecting value", text, stop.value) from None


def _object(text: str, at: int, hook: _ValueHook) -> tuple[dict[str, Any], int]:
    """The object at ``at`` (``text[at]`` is ``{``), each value read by ``hook`` or decoded."""
    answer: dict[str, Any] = {}
    at = _skip(text, at + 1)
    if text.startswith("}", at):
        return answer, at + 1
    while True:
        if not text.startswith('"', at):
            raise json.JSONDecodeError(
                "Expecting property name enclosed in double quotes", text, at
            )
        key, at = _DECODER.raw_decode(text, at)  # a JSON string: it starts with a quote
        at = _skip(text, at)
        if not text.startswith(":", at):
            raise json.JSONDecodeError("Expecting ':' delimiter", text, at)
        at = _skip(text, at + 1)
        end = hook(key, at, answer)
        if end is None:
            answer[key], at = _DECODER.raw_decode(text, at)
        else:
            at = end
        at = _skip(text, at)
        if text.startswith(",", at):
            at = _skip(text, at + 1)
            continue
        if text.startswith("}", at):
            return answer, at + 1
        raise json.JSONDecodeError("Expecting ',' delimiter", text, at)


def _array(text: str, at: int, element: Callable[[int, int], int]) -> int:
    """Each element of the array at ``at`` (``text[at]`` is ``[``) read by
    ``element(position, offset) -> offset after it``; the offset after the array.
    The hot loop: whitespace is skipped only where present."""
    at = _skip(text, at + 1)
    if text.startswith("]", at):
        return at + 1
    position = 0
    end = len(text)
    while True:
        at = element(position, at)
        position += 1
        if at < end and text[at] in _WHITESPACE:
            at = _skip(text, at)
        if text.startswith(",", at):
            at += 1
            if at < end and text[at] in _WHITESPACE:
                at = _skip(text, at)
            continue
        if text.startswith("]", at):
            return at + 1
        raise json.JSONDecodeError("Expecting ',' delimiter", text, at)


def _end(text: str, at: int, answer: dict[str, Any]) -> dict[str, Any]:
    at = _skip(text, at)
    if at != len(text):
        raise json.JSONDecodeError("Extra data", text, at)
    return answer


def _skip(text: str, at: int) -> int:
    match = _SPACE.match(text, at)
    assert match is not None  # the pattern matches the empty string
    return match.end()
