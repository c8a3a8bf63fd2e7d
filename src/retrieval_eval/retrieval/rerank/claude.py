"""Listwise reranking with Claude: one Messages API call orders all candidates.

The reply must be exactly ``{"ranking": [...]}`` (optionally in a code fence)
listing every passage number once; anything else fails the query loudly. A
silent fallback to the fused order would report a reranker's quality for a run
the reranker never ordered. Token usage becomes the query's cost with the
configured price table, and answers are kept in a cache keyed by (prompt
version, model, query, candidate ids and texts), so re-running an unchanged
evaluation makes no API call. A cached answer still reports the cost it had:
``cost_per_query_usd`` is what the system costs per query, not what this
evaluation spent.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from retrieval_eval.claude_api import ask_claude, json_reply, shown_reply
from retrieval_eval.errors import RetrievalEvalError
from retrieval_eval.retrieval.base import Hit
from retrieval_eval.retrieval.config import ClaudeRerankConfig
from retrieval_eval.retrieval.rerank.base import Reranking
from retrieval_eval.retrieval.rerank.cache import RerankCache

if TYPE_CHECKING:
    import anthropic

# Part of every cache key: changing the prompt or the parsing below must bump it.
PROMPT_VERSION = "listwise-v1"

_PROMPT = """You rank search results by relevance. Below are a query and {count} numbered passages.
Order the passages from most to least relevant to the query.
Reply with only a JSON object: {{"ranking": [<passage numbers, most relevant first>]}},
listing every number from 1 to {count} exactly once.

Query: {query}

Passages:
{passages}"""


class RerankError(RetrievalEvalError):
    """The reranker's answer cannot be trusted; the evaluation stops."""


class ClaudeReranker:
    name = "claude"

    def __init__(
        self,
        client: anthropic.Anthropic,
        config: ClaudeRerankConfig,
        cache_dir: Path | None = None,
    ) -> None:
        self._client = client
        self.config = config
        self._cache = RerankCache(cache_dir) if cache_dir is not None else None
        self.api_calls = 0
        self.cache_hits = 0

    def rerank(self, query: str, candidates: Sequence[Hit]) -> Reranking:
        key = cache_key(self.config, query, candidates)
        if self._cache is not None:
            cached = self._cache.get(key)
            if cached is not None:
                self.cache_hits += 1
                return cached
        passages = "\n\n".join(
            f"[{number}] {_clip(hit.text, self.config.passage_chars)}"
            for number, hit in enumerate(candidates, start=1)
        )
        prompt = _PROMPT.format(count=len(candidates), query=query, passages=passages)
        reply = ask_claude(
            self._client,
            model=self.config.model,
            max_tokens=16 + 5 * len(candidates),
            prompt=prompt,
            failure=RerankError,
            about=f"the Claude reranker's API call for query {query!r}",
        )
        self.api_calls += 1
        order = parse_ranking(reply.text, count=len(candidates), query=query)
        cost = (
            reply.input_tokens * self.config.input_usd_per_mtok
            + reply.output_tokens * self.config.output_usd_per_mtok
        ) / 1_000_000
        reranking = Reranking(
            ranked=tuple(candidates[number - 1].doc_id for number in order), cost_usd=cost
        )
        if self._cache is not None:
            self._cache.put(key, reranking)
        return reranking

    def describe(self) -> Mapping[str, object]:
        return {
            "reranker": self.name,
            "model": self.config.model,
            "prompt_version": PROMPT_VERSION,
            "passage_chars": self.config.passage_chars,
        }

    def close(self) -> None:
        if self._cache is not None:
            self._cache.close()
            self._cache = None


def cache_key(config: ClaudeRerankConfig, query: str, candidates: Sequence[Hit]) -> str:
    """(prompt version, model, passage cut, query, each candidate's id and text digest)."""
    fingerprints = [
        [hit.doc_id, hashlib.sha256(hit.text.encode("utf-8", "surrogatepass")).hexdigest()]
        for hit in candidates
    ]
    material = [PROMPT_VERSION, config.model, config.passage_chars, query, fingerprints]
    return hashlib.sha256(json.dumps(material, ensure_ascii=False).encode("utf-8")).hexdigest()


def parse_ranking(reply: str, *, count: int, query: str) -> list[int]:
    """Accept exactly ``{"ranking": [...]}`` holding each of 1..count once."""
    parsed = json_reply(reply)
    ranking = parsed.get("ranking") if isinstance(parsed, dict) else None
    problem = _ranking_problem(ranking, count)
    if problem is not None:
        raise RerankError(
            f"the Claude reranker's reply for query {query!r} is malformed ({problem}): "
            f"{shown_reply(reply)}"
        )
    assert isinstance(ranking, list)
    return [int(number) for number in ranking]


def _ranking_problem(ranking: object, count: int) -> str | None:
    if not isinstance(ranking, list):
        return 'expected {"ranking": [numbers]}'
    if any(isinstance(n, bool) or not isinstance(n, int) for n in ranking):
        return "the ranking must hold passage numbers only"
    if sorted(ranking) != list(range(1, count + 1)):
        return f"the ranking must list every number from 1 to {count} exactly once"
    return None


def _clip(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"
