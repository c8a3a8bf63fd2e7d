"""A scripted query writer behind the loopback Messages API (tests/support/fake_anthropic).

It answers `generate`'s prompts the way a model would, from what the prompt shows: the
passage ids, the rare terms and whether a previous attempt was rejected. ``scripted``
maps (passage id, attempt) to a query for the cases a test wants to control.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

Responder = Callable[[dict[str, Any]], tuple[int, str]]


def prompt_of(body: dict[str, Any]) -> str:
    content = body["messages"][0]["content"]
    return content if isinstance(content, str) else content[0]["text"]


def passage_ids(prompt: str) -> list[str]:
    return re.findall(r"^Passage \d+ \(id (.+)\):$", prompt, re.MULTILINE)


def rare_terms(prompt: str) -> list[str]:
    line = re.search(r"^Rare terms: (.*)$", prompt, re.MULTILINE)
    assert line is not None
    return [] if line.group(1) == "(none)" else line.group(1).split(", ")


def first_sentence(prompt: str, number: int = 1) -> str:
    passage = prompt.split(f"Passage {number} (id ", 1)[1].split("\n", 3)[2]
    return re.split(r"(?<=[.!?])\s", passage.strip(), maxsplit=1)[0]


def answer(query: str, keywords: list[str], context: str) -> str:
    return json.dumps({"query": query, "expected_keywords": keywords, "answer_context": context})


LEXICAL_MARKERS = ("exactly as written", "keyword query", "within the tag")


def loose_words(prompt: str, terms: list[str]) -> str:
    """Every other word of each passage's first sentence, rare terms left out: no three
    words in a row come from a passage, as in a real paraphrase."""
    parts = []
    for number in range(1, len(passage_ids(prompt)) + 1):
        sentence = first_sentence(prompt, number)
        words = [w for w in re.findall(r"[A-Za-z]+", sentence) if w.lower() not in terms]
        parts.append(" ".join(words[::2][:8]))
    return " and ".join(p for p in parts if p) or "something else entirely"


def writer(
    scripted: dict[tuple[str, int], str] | None = None, *, log: list[str] | None = None
) -> Responder:
    """Lexical styles get the rare terms; meaning styles get the scripted query when there is
    one, else loose words of the passage."""

    def respond(body: dict[str, Any]) -> tuple[int, str]:
        prompt = prompt_of(body)
        ids = passage_ids(prompt)
        attempt = 2 if "previous attempt was rejected" in prompt else 1
        if log is not None:
            log.append(f"{ids[0]}#{attempt}")
        terms = rare_terms(prompt)
        lexical = any(marker in prompt for marker in LEXICAL_MARKERS)
        default = " ".join(terms[:3]) if lexical else loose_words(prompt, terms)
        query = (scripted or {}).get((ids[0], attempt)) or default
        return 200, answer(query, terms[:2], first_sentence(prompt))

    return respond
