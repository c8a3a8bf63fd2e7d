"""The user's own reranker, through the same two ways as a custom retriever.

- ``python = "module:factory"``: the factory (called with ``options``) returns an
  object with ``name``, ``rerank(query, candidates) -> SearchResult`` and
  ``describe()``; ``candidates`` are ``Hit``s (id, fused score, text).
- ``command = [...]``: a long-running process speaking JSON lines, one request
  per query: ``{"op": "rerank", "query": "...", "candidates": [{"id", "score",
  "text"}]}`` answered by ``{"hits": [{"id", "score"}], "cost_usd": 0.0}``.

Either answer is checked like a custom retriever's (finite scores, ordered by
score, ties by id) and then like every reranker's (only candidates, each once).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from retrieval_eval.errors import RetrievalEvalError
from retrieval_eval.retrieval.answers import normalise_hits
from retrieval_eval.retrieval.base import Hit
from retrieval_eval.retrieval.config import CustomConfig
from retrieval_eval.retrieval.external.command import CommandRetriever, _short
from retrieval_eval.retrieval.external.custom import HostedFactory
from retrieval_eval.retrieval.rerank.base import Reranker, Reranking

_SETTING = "retrievers.hybrid.custom.timeout_s"


def build_custom_reranker(config: CustomConfig) -> Reranker:
    if config.command is not None:
        return CommandReranker(config.command, cwd=config.cwd, timeout_s=config.timeout_s)
    assert config.python is not None  # CustomConfig guarantees exactly one
    # As for a custom retriever: imported from the repository (or cwd) in a child of its
    # own, every call to the user's code bounded by timeout_s.
    return FactoryReranker(
        config.python, config.options, cwd=config.cwd, timeout_s=config.timeout_s
    )


def _rerank_over(pipe: CommandRetriever, query: str, candidates: Sequence[Hit]) -> Reranking:
    """One ``rerank`` request on ``pipe``, its answer checked (only candidates, each once
    is the caller's check)."""
    request = {
        "op": "rerank",
        "query": query,
        "candidates": [
            {"id": hit.doc_id, "score": hit.score, "text": hit.text} for hit in candidates
        ],
    }
    answer = pipe._ask("rerank", request)
    raw_hits = answer.get("hits")
    if not isinstance(raw_hits, list):
        raise RetrievalEvalError(
            f"{pipe.label}: answer to `rerank` lacks a `hits` list: {_short(answer)}"
        )
    hits: list[Hit] = []
    for position, raw in enumerate(raw_hits):
        if not isinstance(raw, dict) or "id" not in raw or "score" not in raw:
            raise RetrievalEvalError(
                f"{pipe.label}: hit {position} must be an object with `id` and `score`, "
                f"got {_short(raw)}"
            )
        hits.append(Hit(doc_id=raw["id"], score=raw["score"], text=""))
    # No cut: an answer naming a non-candidate must reach the check, not be cut off.
    checked = normalise_hits(hits, len(hits), cost_usd=answer.get("cost_usd", 0.0), who=pipe.label)
    return Reranking(tuple(hit.doc_id for hit in checked.hits), checked.cost_usd)


class FactoryReranker(HostedFactory):
    """The object a reranker factory returned, living in a child process."""

    def __init__(
        self, spec: str, options: Mapping[str, object], *, cwd: Path | None, timeout_s: float
    ) -> None:
        super().__init__(
            spec,
            options,
            kind="reranker",
            cwd=cwd,
            timeout_s=timeout_s,
            setting=_SETTING,
            config_label=f"retrievers.hybrid.custom.python = {spec!r}",
            label=f"custom reranker {spec}",
        )

    def rerank(self, query: str, candidates: Sequence[Hit]) -> Reranking:
        return _rerank_over(self, query, candidates)

    def describe(self) -> Mapping[str, object]:
        return {"reranker": "custom", "python": self.spec, **self.described()}


class CommandReranker(CommandRetriever):
    """The JSON-lines pipe of a custom retriever command, asked to ``rerank``."""

    setting = _SETTING

    def __init__(self, command: Sequence[str], *, cwd: Path | None, timeout_s: float):
        super().__init__(command, cwd=cwd, timeout_s=timeout_s)
        self.label = self.label.replace("custom retriever", "custom reranker", 1)

    def rerank(self, query: str, candidates: Sequence[Hit]) -> Reranking:
        return _rerank_over(self, query, candidates)

    def describe(self) -> Mapping[str, object]:
        return {"reranker": "custom", "command": self.command}
