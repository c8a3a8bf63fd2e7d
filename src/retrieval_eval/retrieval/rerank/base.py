"""What every reranker meets, and how its answer is applied to the fused run.

A reranker sees the query and the fused top ``rerank_depth`` candidates (id,
fused score, best chunk's text) and answers with candidate ids, best first. An
answer naming a document that was not a candidate, or naming one twice, is an
error: a reranker that invents results must not be scored as if it had found
them. Candidates it leaves out follow the ones it ranked, in fused order, and
the documents below ``rerank_depth`` follow those.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from retrieval_eval.errors import RetrievalEvalError
from retrieval_eval.retrieval.base import Hit


@dataclass(frozen=True)
class Reranking:
    """Candidate ids best first, and what producing that order cost."""

    ranked: tuple[str, ...]
    cost_usd: float = 0.0


@dataclass(frozen=True)
class Reranked:
    hits: tuple[Hit, ...]
    cost_usd: float


class Reranker(Protocol):
    name: str

    def rerank(self, query: str, candidates: Sequence[Hit]) -> Reranking: ...

    def describe(self) -> Mapping[str, object]: ...


def apply_reranking(
    reranker: Reranker, query: str, fused: Sequence[Hit], *, depth: int
) -> Reranked:
    """The fused hits with the top ``depth`` reordered by ``reranker``.

    Scores become 1 / rank in the final order, so they agree with it (a fused
    score and a reranker's position are not on one scale).
    """
    candidates = list(fused[:depth])
    if not candidates:
        return Reranked(hits=(), cost_usd=0.0)
    reranking = reranker.rerank(query, candidates)
    by_id = {hit.doc_id: hit for hit in candidates}
    seen: set[str] = set()
    for doc_id in reranking.ranked:
        if doc_id not in by_id:
            raise RetrievalEvalError(
                f"reranker {reranker.name}: ranked {doc_id!r}, which was not one of the "
                f"{len(candidates)} candidates"
            )
        if doc_id in seen:
            raise RetrievalEvalError(f"reranker {reranker.name}: ranked {doc_id!r} twice")
        seen.add(doc_id)
    order = [by_id[doc_id] for doc_id in reranking.ranked]
    order += [hit for hit in candidates if hit.doc_id not in seen]
    order += list(fused[depth:])
    hits = tuple(Hit(hit.doc_id, 1.0 / rank, hit.text) for rank, hit in enumerate(order, start=1))
    return Reranked(hits=hits, cost_usd=reranking.cost_usd)
