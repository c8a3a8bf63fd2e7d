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
from typing import Any

from retrieval_eval.errors import ConfigError, RetrievalEvalError
from retrieval_eval.retrieval.answers import normalise_hits
from retrieval_eval.retrieval.base import Hit, SearchResult
from retrieval_eval.retrieval.command import CommandRetriever, _short
from retrieval_eval.retrieval.config import CustomConfig
from retrieval_eval.retrieval.custom import BoundedWorker, call_factory
from retrieval_eval.retrieval.rerank.base import Reranker, Reranking


def build_custom_reranker(config: CustomConfig) -> Reranker:
    if config.command is not None:
        return CommandReranker(config.command, cwd=config.cwd, timeout_s=config.timeout_s)
    assert config.python is not None  # CustomConfig guarantees exactly one
    label = f"retrievers.hybrid.custom.python = {config.python!r}"
    # As for a custom retriever: importable from the repository (or cwd), and every call
    # to the user's code bounded by timeout_s on a thread of its own.
    worker = BoundedWorker(config.timeout_s, setting="retrievers.hybrid.custom.timeout_s")
    inner = call_factory(config.python, config.options, label=label, root=config.cwd, worker=worker)
    if not callable(getattr(inner, "rerank", None)) or not callable(
        getattr(inner, "describe", None)
    ):
        raise ConfigError(
            f"{label}: the factory returned {type(inner).__name__}, which lacks "
            "rerank(query, candidates) and describe()"
        )
    return FactoryReranker(config.python, inner, worker)


class FactoryReranker:
    def __init__(self, spec: str, inner: Any, worker: BoundedWorker):
        self.spec = spec
        self.inner = inner
        self.worker = worker
        name = getattr(inner, "name", None)
        self.name = name if isinstance(name, str) and name else "custom"
        self.label = f"custom reranker {spec}"

    def rerank(self, query: str, candidates: Sequence[Hit]) -> Reranking:
        try:
            result = self.worker.call(
                lambda: self.inner.rerank(query, tuple(candidates)), f"{self.label}: rerank()"
            )
        except RetrievalEvalError:
            raise
        except Exception as error:
            raise RetrievalEvalError(
                f"{self.label}: rerank() raised {type(error).__name__}: {error}"
            ) from error
        if not isinstance(result, SearchResult):
            raise RetrievalEvalError(
                f"{self.label}: rerank() returned {type(result).__name__}, expected a SearchResult"
            )
        # No cut: an answer naming a non-candidate must reach the check, not be cut off.
        checked = normalise_hits(
            result.hits, len(result.hits), cost_usd=result.cost_usd, who=self.label
        )
        return Reranking(tuple(hit.doc_id for hit in checked.hits), checked.cost_usd)

    def describe(self) -> Mapping[str, object]:
        return {"reranker": "custom", "python": self.spec, **dict(self.inner.describe())}

    def close(self) -> None:
        close = getattr(self.inner, "close", None)
        if callable(close):
            self.worker.call(close, f"{self.label}: close()")


class CommandReranker(CommandRetriever):
    """The JSON-lines pipe of a custom retriever command, asked to ``rerank``."""

    def __init__(self, command: Sequence[str], *, cwd: Path | None, timeout_s: float):
        super().__init__(command, cwd=cwd, timeout_s=timeout_s)
        self.label = self.label.replace("custom retriever", "custom reranker", 1)

    def rerank(self, query: str, candidates: Sequence[Hit]) -> Reranking:
        request = {
            "op": "rerank",
            "query": query,
            "candidates": [
                {"id": hit.doc_id, "score": hit.score, "text": hit.text} for hit in candidates
            ],
        }
        answer = self._ask("rerank", request)
        raw_hits = answer.get("hits")
        if not isinstance(raw_hits, list):
            raise RetrievalEvalError(
                f"{self.label}: answer to `rerank` lacks a `hits` list: {_short(answer)}"
            )
        hits: list[Hit] = []
        for position, raw in enumerate(raw_hits):
            if not isinstance(raw, dict) or "id" not in raw or "score" not in raw:
                raise RetrievalEvalError(
                    f"{self.label}: hit {position} must be an object with `id` and `score`, "
                    f"got {_short(raw)}"
                )
            hits.append(Hit(doc_id=raw["id"], score=raw["score"], text=""))
        checked = normalise_hits(
            hits, len(hits), cost_usd=answer.get("cost_usd", 0.0), who=self.label
        )
        return Reranking(tuple(hit.doc_id for hit in checked.hits), checked.cost_usd)

    def describe(self) -> Mapping[str, object]:
        return {"reranker": "custom", "command": self.command}
