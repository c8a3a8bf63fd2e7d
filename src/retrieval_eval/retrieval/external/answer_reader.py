"""Read one JSON answer line, handing the elements of its ``hits`` array over one by one.

``json.loads`` would build every hit of an answer as a dict before any could be
dropped: two million hits cost over a gigabyte. Here the top-level object is
walked with the ``json`` module's own decoder, and each element of a top-level
``"hits"`` array goes to a callback (which keeps only the best ``k``) as soon
as it is decoded. Anything else parses exactly as ``json.loads`` would.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

STREAMED = "hits"
_SPACE = re.compile(r"[ \t\n\r]*")
_WHITESPACE = " \t\n\r"
_DECODER = json.JSONDecoder()


class Streamed(list[Any]):
    """Stands in an answer for the hits that went to the callback (it stays empty)."""


def read_answer(text: str, on_hit: Callable[[int, Any], None]) -> Any:
    """The answer with ``hits`` replaced by an empty ``Streamed`` marker once streamed.

    Raises ``json.JSONDecodeError`` as ``json.loads`` would for malformed text.
    """
    at = _skip(text, 0)
    if not text.startswith("{", at):
        return json.loads(text)  # not an object: the caller says what it is instead
    answer: dict[str, Any] = {}
    at = _skip(text, at + 1)
    if text.startswith("}", at):
        return _end(text, at + 1, answer)
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
        if key == STREAMED and text.startswith("[", at):
            at = _stream(text, at, on_hit)
            answer[key] = Streamed()
        else:
            answer[key], at = _DECODER.raw_decode(text, at)
        at = _skip(text, at)
        if text.startswith(",", at):
            at = _skip(text, at + 1)
            continue
        if text.startswith("}", at):
            return _end(text, at + 1, answer)
        raise json.JSONDecodeError("Expecting ',' delimiter", text, at)


def _stream(text: str, at: int, on_hit: Callable[[int, Any], None]) -> int:
    """The hot loop: the C scanner per element, and whitespace skipped only where present."""
    scan: Callable[[str, int], tuple[Any, int]] = _DECODER.scan_once  # type: ignore[attr-defined]
    at = _skip(text, at + 1)
    if text.startswith("]", at):
        return at + 1
    position = 0
    end = len(text)
    while True:
        try:
            value, at = scan(text, at)
        except StopIteration as stop:
            raise json.JSONDecodeError("Expecting value", text, stop.value) from None
        on_hit(position, value)
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
