"""The one way this package asks Claude: a Messages API call and its JSON reply.

The judge, the Claude reranker and `generate` each send one user prompt and expect
one JSON object back. An API failure (after the client's own retries) or a reply
that is not the expected object must stop the run loudly, never be guessed at, so
both steps raise the caller's own error type with the caller's description.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from retrieval_eval.deadline import TimeLimitError
from retrieval_eval.errors import RetrievalEvalError

# The anthropic package takes about a second to import; it is imported where used.
if TYPE_CHECKING:
    import anthropic

# A reply may wrap its JSON in a Markdown fence; nothing else around it is accepted.
_FENCE = re.compile(r"^```(?:json)?\s*(.*?)\s*```$", re.DOTALL)


@dataclass(frozen=True)
class ClaudeReply:
    text: str
    input_tokens: int
    output_tokens: int


def ask_claude(
    client: anthropic.Anthropic,
    *,
    model: str,
    max_tokens: int,
    prompt: str,
    failure: type[RetrievalEvalError],
    about: str,
    status_note: str = "",
) -> ClaudeReply:
    """One user prompt; ``failure(f"{about} failed …")`` when the API call does
    (``status_note`` follows the HTTP status when the API answered with an error)."""
    import anthropic

    try:
        message = client.messages.create(
            model=model, max_tokens=max_tokens, messages=[{"role": "user", "content": prompt}]
        )
    except anthropic.APIStatusError as error:
        raise failure(f"{about} failed with HTTP {error.status_code}{status_note}") from error
    except anthropic.APIError as error:
        # The client turns any exception inside its request into APIConnectionError, the
        # time bound's too: that one ends the run as itself, not as a failed call.
        cause: BaseException | None = error
        seen: set[int] = set()
        while cause is not None and id(cause) not in seen:
            if isinstance(cause, TimeLimitError):
                raise cause from None
            seen.add(id(cause))
            cause = cause.__cause__ or cause.__context__
        raise failure(f"{about} failed: {type(error).__name__}") from error
    text = "".join(block.text for block in message.content if block.type == "text")
    return ClaudeReply(text, message.usage.input_tokens, message.usage.output_tokens)


def json_reply(reply: str) -> object:
    """The JSON value of a reply, optionally fenced; None when it is not JSON."""
    text = reply.strip()
    fenced = _FENCE.match(text)
    if fenced:
        text = fenced.group(1)
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return None


def shown_reply(reply: str) -> str:
    """A reply quoted in an error message: at most 200 characters."""
    return repr(reply if len(reply) <= 200 else reply[:200] + "…")
