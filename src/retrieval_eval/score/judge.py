"""The optional LLM judge: does the retrieved text support answering the query?

An LLM judge is useful but not deterministic, so it is opt-in, it
fails the run on an API error or a malformed score instead of recording a fake
zero, and its scores survive a judge-disabled run only while every query's
retrieved ids and judged text are exactly what was judged (see
``carry_over_scores``): a score that describes other text must not be shown.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from retrieval_eval.claude_api import ask_claude, json_reply, shown_reply
from retrieval_eval.errors import RetrievalEvalError

# anthropic takes about a second to import; the settings read this module's defaults on
# every run, so a run without the judge must not pay for it. It is imported where used.
if TYPE_CHECKING:
    import anthropic

DEFAULT_JUDGE_MODEL = "claude-haiku-4-5"

_PROMPT = """You grade a search engine. Given a user's query and the passages it retrieved,
score from 0.0 to 1.0 how well the passages, taken together, support answering the query:
1.0 = they contain everything needed, 0.5 = partial support, 0.0 = no support.
{context}Reply with only a JSON object: {{"score": <number between 0 and 1>}}

Query: {query}

Passages:
{passages}"""


class JudgeError(RetrievalEvalError):
    """The judge could not produce a trustworthy score; the run must not continue."""


@dataclass(frozen=True)
class JudgePricing:
    """USD per million tokens; the defaults are Claude Haiku 4.5's list prices."""

    input_usd_per_mtok: float = 1.0
    output_usd_per_mtok: float = 5.0

    def cost(self, input_tokens: int, output_tokens: int) -> float:
        return (
            input_tokens * self.input_usd_per_mtok + output_tokens * self.output_usd_per_mtok
        ) / 1_000_000


@dataclass(frozen=True)
class JudgedQuery:
    query_id: str
    score: float
    fingerprint: str
    cost_usd: float


# What ``json.dumps(value, ensure_ascii=False)`` builds on every call, built once.
_PASSAGE_JSON = json.JSONEncoder(ensure_ascii=False)


def judged_fingerprint(passages: Sequence[tuple[str, str]]) -> str:
    """Identity of what was judged: sha256 of each ranked (doc id, text) pair as a JSON
    array and a newline, in order. One hash over the joined text gives the digest that
    updating it pair by pair does, at a fraction of the cost per query."""
    joined = "".join(f"{_PASSAGE_JSON.encode([doc_id, text])}\n" for doc_id, text in passages)
    return hashlib.sha256(joined.encode("utf-8")).hexdigest()


def build_client(
    *, api_key: str, base_url: str | None = None, max_retries: int = 3, timeout_s: float = 60.0
) -> anthropic.Anthropic:
    """The edge builds the client; the judge never reads the environment itself."""
    import anthropic

    return anthropic.Anthropic(
        api_key=api_key, base_url=base_url, max_retries=max_retries, timeout=timeout_s
    )


class ClaudeJudge:
    """Scores each query's retrieved passages with one Messages API call."""

    def __init__(
        self,
        client: anthropic.Anthropic,
        *,
        model: str = DEFAULT_JUDGE_MODEL,
        pricing: JudgePricing | None = None,
        max_tokens: int = 32,
    ) -> None:
        self.client = client
        self.model = model
        self._pricing = pricing or JudgePricing()
        self._max_tokens = max_tokens

    def judge(
        self,
        query_id: str,
        query: str,
        passages: Sequence[tuple[str, str]],
        answer_context: str | None = None,
    ) -> JudgedQuery:
        prompt = _PROMPT.format(
            query=query,
            passages=_format_passages(passages),
            context=f"The expected answer, for reference: {answer_context}\n"
            if answer_context
            else "",
        )
        reply = ask_claude(
            self.client,
            model=self.model,
            max_tokens=self._max_tokens,
            prompt=prompt,
            failure=JudgeError,
            about=f"the judge's API call for query {query_id!r}",
            status_note="; no score was recorded",
        )
        return JudgedQuery(
            query_id=query_id,
            score=parse_score(reply.text, query_id=query_id),
            fingerprint=judged_fingerprint(passages),
            cost_usd=self._pricing.cost(reply.input_tokens, reply.output_tokens),
        )


def _format_passages(passages: Sequence[tuple[str, str]]) -> str:
    if not passages:
        return "(no passages were retrieved)"
    numbered = enumerate(passages, start=1)
    return "\n\n".join(f"[{rank}] ({doc_id})\n{text}" for rank, (doc_id, text) in numbered)


def parse_score(reply: str, *, query_id: str) -> float:
    """Accept exactly ``{"score": x}`` with 0 ≤ x ≤ 1; anything else fails the run."""
    parsed = json_reply(reply)
    score = parsed.get("score") if isinstance(parsed, dict) else None
    if isinstance(score, bool) or not isinstance(score, int | float) or not 0.0 <= score <= 1.0:
        raise JudgeError(
            f"the judge's reply for query {query_id!r} is not a score between 0 and 1: "
            f"{shown_reply(reply)}"
        )
    return float(score)


def carry_over_scores(
    previous: Mapping[str, tuple[str, float]] | None, current_fingerprints: Mapping[str, str]
) -> dict[str, float] | None:
    """Scores from a judged run, kept for a judge-disabled run only if nothing drifted.

    ``previous`` maps query id → (fingerprint, score) from the committed artifact.
    Any query whose retrieved text changed, or that was added or removed, drops the
    whole column: a partial column would mix scores of different retrievals.
    """
    if not previous or set(previous) != set(current_fingerprints):
        return None
    if any(previous[qid][0] != fingerprint for qid, fingerprint in current_fingerprints.items()):
        return None
    return {qid: score for qid, (_, score) in previous.items()}
