"""What `generate` asks the model, and the one reply shape it accepts.

Each query style tests a different ability of the retriever:
- ``exact_match`` and ``keyword`` reuse the document's rare terms (lexical search wins);
- ``synonym`` and ``paraphrase`` avoid them (only meaning can find the document);
- ``multi_concept`` needs two documents to answer;
- ``tag_filter`` is a query run with a tag filter.
A reply is a JSON object with exactly ``query``, ``expected_keywords`` and
``answer_context``; anything else fails the run rather than being guessed at.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from retrieval_eval.author.claude import GenerateError
from retrieval_eval.claude_api import json_reply, shown_reply

PROMPT_VERSION = "1"
Style = Literal["exact_match", "keyword", "synonym", "paraphrase", "multi_concept", "tag_filter"]
LEXICAL_STYLES: frozenset[str] = frozenset({"exact_match", "keyword"})
MEANING_STYLES: frozenset[str] = frozenset({"synonym", "paraphrase"})

_MAX_PASSAGE_CHARS = 3000
_MAX_QUERY_CHARS = 300

_INSTRUCTIONS: dict[str, str] = {
    "exact_match": "Write the query a user who remembers this document would type: "
    "use at least two of the rare terms below exactly as written.",
    "keyword": "Write a short keyword query (2 to 6 words, no question) built from the rare "
    "terms below, as someone typing into a search box would.",
    "synonym": "Write a query for this document that uses none of the rare terms below nor any "
    "form of them: replace each idea with a synonym or a more general word.",
    "paraphrase": "Write a natural question this document answers, in entirely your own "
    "words: use none of the rare terms below and no phrase of three or more words from "
    "the passage.",
    "multi_concept": "Write one question whose full answer needs BOTH passages below: it must "
    "combine an idea from each. Use your own words.",
    "tag_filter": "Write a query that this document answers, as a user who searches only "
    "within the tag shown below would type it.",
}


@dataclass(frozen=True)
class Passage:
    doc_id: str
    title: str
    text: str


@dataclass(frozen=True)
class Answer:
    query: str
    expected_keywords: tuple[str, ...]
    answer_context: str


def build_prompt(
    style: Style,
    passages: tuple[Passage, ...],
    *,
    rare_terms: tuple[str, ...],
    tag: str | None = None,
    feedback: str | None = None,
) -> str:
    shown = "\n\n".join(
        f"Passage {number} (id {p.doc_id}):\nTitle: {p.title}\n{p.text[:_MAX_PASSAGE_CHARS]}"
        for number, p in enumerate(passages, start=1)
    )
    parts = [
        "You write test queries for a search engine's golden dataset.",
        _INSTRUCTIONS[style],
        f"Rare terms: {', '.join(rare_terms) if rare_terms else '(none)'}",
    ]
    if tag is not None:
        parts.append(f"Tag: {tag}")
    if feedback:
        parts.append(f"Your previous attempt was rejected: {feedback} Write a different query.")
    parts.append(
        "Reply with only a JSON object with three keys: "
        '"query" (the query), "expected_keywords" (1 to 5 words or short phrases copied '
        'exactly from the passage that a good result must contain) and "answer_context" '
        "(one sentence copied exactly from the passage that answers the query)."
    )
    parts.append(shown)
    return "\n\n".join(parts)


def parse_answer(reply: str, *, about: str) -> Answer:
    """The reply as an Answer, or GenerateError naming what is wrong with it."""
    data = json_reply(reply)
    problem = _problem(data)
    if problem is not None:
        raise GenerateError(f"the model's answer for {about} {problem}: {shown_reply(reply)}")
    assert isinstance(data, dict)
    return Answer(
        query=" ".join(data["query"].split()),
        expected_keywords=tuple(data["expected_keywords"]),
        answer_context=data["answer_context"].strip(),
    )


def _problem(data: object) -> str | None:
    if not isinstance(data, dict):
        return "is not a JSON object"
    if set(data) != {"query", "expected_keywords", "answer_context"}:
        return "does not have exactly the keys query, expected_keywords, answer_context"
    query = data["query"]
    if not isinstance(query, str) or not query.strip() or len(query) > _MAX_QUERY_CHARS:
        return f"has no query, or one longer than {_MAX_QUERY_CHARS} characters"
    keywords = data["expected_keywords"]
    if not isinstance(keywords, list) or not all(
        isinstance(k, str) and k.strip() for k in keywords
    ):
        return "has expected_keywords that are not a list of non-empty strings"
    if not isinstance(data["answer_context"], str):
        return "has an answer_context that is not a string"
    if any(_has_surrogate(s) for s in (query, data["answer_context"], *keywords)):
        return "holds text that is not valid Unicode (a lone surrogate)"
    return None


def _has_surrogate(text: str) -> bool:
    return any(0xD800 <= ord(char) <= 0xDFFF for char in text)
