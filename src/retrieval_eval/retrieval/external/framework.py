"""A framework's retriever (LangChain, LlamaIndex) as our Retriever, inside the factory host.

This module runs in the factory host's child process, never in the run's own: the
object it searches is built by the team's code (``object = "module:attribute"``), which
is code from the pull request. The framework adapters (langchain_adapter.py,
llamaindex_adapter.py) say how to ask their framework; this module does what both share:

- the object is built once: the attribute itself, or what calling it returns;
- each result's document id is its metadata's ``id_key``; a result without it is an
  error naming the query and the keys it had;
- the score is the framework's where it gives one, else ``1 / rank``;
- results (often chunks) collapse to documents by the rule of the built-in retrievers:
  a document ranks by its best result, ties go to the smaller id; when fewer than ``k``
  documents come back from a full answer, the retriever is asked again for four times as
  many results, up to ``MAX_DEPTH``;
- how many results collapsed into each document is counted over the run
  (``collapsed()``, sent with ``describe``; the run logs each dataset's share);
- returned ids that name no document of the corpus at all are an error: it is what a
  wrong ``id_key`` looks like (the node id in place of the document id).
"""

from __future__ import annotations

import importlib
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from retrieval_eval.load.documents import Corpus
from retrieval_eval.retrieval.base import Hit, SearchResult

MAX_DEPTH = 4096  # the most results asked of the framework for one query


class FrameworkError(Exception):
    """A configuration the framework's object cannot serve (the run exits 2)."""


@dataclass(frozen=True)
class Result:
    """One result as the framework returned it."""

    metadata: Mapping[str, Any]
    score: float | None
    text: str


class Framework:
    """What an adapter supplies: the framework's retriever type, and how to ask it."""

    name = ""  # "langchain"
    retriever_type = ""  # "langchain_core.retrievers.BaseRetriever", for messages

    def is_retriever(self, candidate: object) -> bool:
        raise NotImplementedError

    def prepare(self, retriever: Any, depth: int, tags: Sequence[str], tag_key: str | None) -> Any:
        """The retriever set to return ``depth`` results filtered to ``tags`` (ANY), or a
        FrameworkError saying why the filter cannot be passed."""
        raise NotImplementedError

    def ask(self, retriever: Any, queries: Sequence[str], depth: int) -> list[list[Result]]:
        """Each query's results, best first (one batch call where the framework has one)."""
        raise NotImplementedError


class FrameworkRetriever:
    """The Retriever protocol over a framework's retriever, for the factory host."""

    def __init__(
        self,
        framework: Framework,
        *,
        object: str,
        id_key: str,
        score_key: str | None = None,
        tag_key: str | None = None,
        options: Mapping[str, Any] | None = None,
    ) -> None:
        self.framework = framework
        self.name = framework.name
        self.spec = object
        self.id_key = id_key
        self.score_key = score_key
        self.tag_key = tag_key
        self.retriever = _build(framework, object, dict(options or {}))
        self._corpus_ids: frozenset[str] = frozenset()
        self._collapsed: Counter[int] = Counter()
        self._checked = False

    def index(self, corpus: Corpus) -> None:
        """The framework's retriever holds its own index; the corpus's ids check its answers."""
        self._corpus_ids = frozenset(corpus.ids())

    def search(self, query: str, k: int, tags: Sequence[str] = ()) -> SearchResult:
        return self.search_many([(query, tuple(tags))], k)[0]

    def search_many(
        self, queries: Sequence[tuple[str, Sequence[str]]], k: int
    ) -> list[SearchResult]:
        """Queries with the same tags are asked together, in one batch."""
        results: list[SearchResult | None] = [None] * len(queries)
        groups: dict[tuple[str, ...], list[int]] = {}
        for position, (_, tags) in enumerate(queries):
            groups.setdefault(tuple(sorted(set(tags))), []).append(position)
        for tags, positions in groups.items():
            hits = self._search_group([queries[p][0] for p in positions], k, tags)
            for position, found in zip(positions, hits, strict=True):
                results[position] = SearchResult(hits=found)
        return [result if result is not None else SearchResult(hits=()) for result in results]

    def describe(self) -> Mapping[str, object]:
        return {
            "object": self.spec,
            "type": f"{type(self.retriever).__module__}.{type(self.retriever).__qualname__}",
            "id_key": self.id_key,
            **({"score_key": self.score_key} if self.score_key else {}),
            **({"tag_key": self.tag_key} if self.tag_key else {}),
            # read apart by the parent (frameworks.py), which logs it and never records it
            "collapsed": self.collapsed(),
        }

    def collapsed(self) -> dict[str, int]:
        """How many documents got 1, 2, ... results (chunks) over the run so far."""
        return {str(chunks): documents for chunks, documents in sorted(self._collapsed.items())}

    # --- one group of queries ------------------------------------------------------------

    def _search_group(
        self, queries: Sequence[str], k: int, tags: tuple[str, ...]
    ) -> list[tuple[Hit, ...]]:
        if k <= 0:
            return [() for _ in queries]
        answers: list[tuple[Hit, ...]] = [()] * len(queries)
        counts: list[Counter[str]] = [Counter() for _ in queries]
        pending = list(range(len(queries)))
        depth = k
        while pending:
            retriever = self.framework.prepare(self.retriever, depth, tags, self.tag_key)
            found = self.framework.ask(retriever, [queries[p] for p in pending], depth)
            if len(found) != len(pending):
                raise FrameworkError(
                    f"the retriever answered {len(found)} of {len(pending)} queries in a batch"
                )
            again = []
            for position, results in zip(pending, found, strict=True):
                hits, counts[position] = self._collapse(queries[position], results)
                answers[position] = hits[:k]
                if len(hits) < k and len(results) >= depth and depth < MAX_DEPTH:
                    again.append(position)
            pending, depth = again, min(depth * 4, MAX_DEPTH)
        for position, hits in enumerate(answers):
            self._collapsed.update(counts[position][hit.doc_id] for hit in hits)
        self._check_ids(answers)
        return answers

    def _collapse(
        self, query: str, results: Sequence[Result]
    ) -> tuple[tuple[Hit, ...], Counter[str]]:
        best: dict[str, Hit] = {}
        chunks: Counter[str] = Counter()
        for rank, result in enumerate(results, start=1):
            if self.id_key not in result.metadata:
                keys = ", ".join(sorted(map(str, result.metadata))) or "none"
                raise FrameworkError(
                    f"result {rank} for the query {query!r} has no metadata key "
                    f"{self.id_key!r} (its keys: {keys}); set id_key to the key holding the "
                    "corpus document id"
                )
            doc_id = str(result.metadata[self.id_key])
            chunks[doc_id] += 1
            score = self._score(result, rank)
            if doc_id not in best or score > best[doc_id].score:
                best[doc_id] = Hit(doc_id, score, result.text)
        ranked = sorted(best.values(), key=lambda hit: (-hit.score, hit.doc_id))
        return tuple(ranked), chunks

    def _score(self, result: Result, rank: int) -> float:
        if self.score_key is not None:
            value = result.metadata.get(self.score_key)
            if isinstance(value, int | float) and not isinstance(value, bool):
                return float(value)
        if result.score is not None:
            return float(result.score)
        return 1.0 / rank

    def _check_ids(self, answers: Sequence[tuple[Hit, ...]]) -> None:
        """Once: some returned id must name a corpus document, else id_key is wrong."""
        if self._checked or not self._corpus_ids:
            return
        returned = [hit.doc_id for hits in answers for hit in hits]
        if not returned:
            return
        self._checked = True
        if not set(returned) & self._corpus_ids:
            sample = ", ".join(repr(doc_id) for doc_id in dict.fromkeys(returned[:3]))
            raise FrameworkError(
                f"metadata key {self.id_key!r} gives ids such as {sample}, none of which is a "
                "document of the corpus; set id_key to the key holding the corpus document id"
            )


def _build(framework: Framework, spec: str, options: dict[str, Any]) -> Any:
    """The object ``module:attribute`` names, called with ``options`` when it is a factory."""
    module_name, _, attribute = spec.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as error:
        raise FrameworkError(f"cannot import {module_name} ({error})") from None
    found = getattr(module, attribute, None)
    if found is None:
        raise FrameworkError(f"{module_name} has no attribute {attribute!r}")
    if framework.is_retriever(found):
        if options:
            raise FrameworkError(
                f"{spec} is a retriever, not a function: options apply only to a function "
                "that returns one"
            )
        return found
    if not callable(found):
        raise FrameworkError(
            f"{spec} is a {type(found).__name__}, not a {framework.retriever_type} "
            "nor a function returning one"
        )
    built = _called(found, options)
    if not framework.is_retriever(built):
        raise FrameworkError(
            f"{spec}(...) returned a {type(built).__name__}, not a {framework.retriever_type}"
        )
    return built


def _called(function: Callable[..., Any], options: dict[str, Any]) -> Any:
    return function(**options)
