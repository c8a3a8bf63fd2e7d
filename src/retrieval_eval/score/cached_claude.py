"""Messages API calls with a reply cache and a cost cap: `generate`'s questions and the
run's label judgements (holes, calibration) are asked through it.

The cache is keyed by (model, prompt version, prompt): the same question asked
again is answered from disk, so a re-run costs nothing and, given the same
answers, writes the same fixtures. The cap is checked before each paid call
with the most that call can cost, so the total never passes it.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from retrieval_eval.claude_api import ask_claude
from retrieval_eval.errors import RetrievalEvalError
from retrieval_eval.fileio import atomic_write_text
from retrieval_eval.score.judge import JudgePricing

if TYPE_CHECKING:
    import anthropic


class CostCapReached(RetrievalEvalError):
    """The next call could pass --max-cost-usd."""


@dataclass(frozen=True)
class Reply:
    text: str
    cost_usd: float
    cached: bool


class CachedClaude:
    def __init__(
        self,
        client: anthropic.Anthropic | None,
        *,
        model: str,
        prompt_version: str,
        cache_dir: Path,
        pricing: JudgePricing,
        max_cost_usd: float,
        failure: type[RetrievalEvalError],
        max_tokens: int = 400,
        missing_key: str = "set the key to generate fixtures",
    ) -> None:
        self._client = client
        self.model = model
        self._version = prompt_version
        self._cache_dir = cache_dir
        self._pricing = pricing
        self._max_cost = max_cost_usd
        self._max_tokens = max_tokens
        self._failure = failure
        self._missing_key = missing_key
        self.spent_usd = 0.0
        self.calls = 0
        # The tokens the paid calls used, as the API counted them.
        self.input_tokens = 0
        self.output_tokens = 0
        self.cached_calls = 0

    def _cache_path(self, prompt: str) -> Path:
        key = hashlib.sha256(
            json.dumps([self.model, self._version, prompt], ensure_ascii=False).encode()
        ).hexdigest()
        return self._cache_dir / key[:2] / f"{key}.json"

    def is_cached(self, prompt: str) -> bool:
        return _read_cache(self._cache_path(prompt)) is not None

    def forget(self, prompt: str) -> None:
        """Drop a cached reply the caller could not use, so the next run asks again."""
        self._cache_path(prompt).unlink(missing_ok=True)

    def ask(self, prompt: str, *, about: str) -> Reply:
        path = self._cache_path(prompt)
        cached = _read_cache(path)
        if cached is not None:
            self.cached_calls += 1
            return Reply(cached, 0.0, cached=True)
        if self._client is None:
            raise self._failure(
                "ANTHROPIC_API_KEY is not set and this prompt's answer is not cached; "
                + self._missing_key
            )
        # The most this call can cost: the prompt (about 4 characters a token, rounded up
        # generously) plus the longest reply allowed.
        worst = self._pricing.cost(worst_input_tokens(prompt), self._max_tokens)
        if self.spent_usd + worst > self._max_cost:
            raise CostCapReached(
                f"stopped before passing --max-cost-usd {self._max_cost:g}: "
                f"${self.spent_usd:.4f} spent, the next call could cost up to ${worst:.4f}"
            )
        reply = ask_claude(
            self._client,
            model=self.model,
            max_tokens=self._max_tokens,
            prompt=prompt,
            failure=self._failure,
            about=f"the Messages API call for {about}",
        )
        text = reply.text
        cost = self._pricing.cost(reply.input_tokens, reply.output_tokens)
        self.spent_usd += cost
        self.calls += 1
        self.input_tokens += reply.input_tokens
        self.output_tokens += reply.output_tokens
        atomic_write_text(path, json.dumps({"text": text}, ensure_ascii=False) + "\n")
        return Reply(text, cost, cached=False)


def worst_input_tokens(prompt: str) -> int:
    """The most input tokens the budget assumes a prompt can take: half a token a character
    (English runs about four characters a token) plus 200 for the message's framing."""
    return len(prompt) // 2 + 200


def _read_cache(path: Path) -> str | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None  # absent or unreadable: ask again and rewrite it
    text = data.get("text") if isinstance(data, dict) else None
    return text if isinstance(text, str) else None
