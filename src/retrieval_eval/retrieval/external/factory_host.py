"""The child process a Python factory runs in: the user's code, away from our secrets.

A factory (``python = "module:factory"``) is code from the repository, so from
the pull request under review. Run inside retrieval-eval's own process it could
read everything that process holds: the GitHub token in memory, or in the start-up
environment at ``/proc/self/environ``. So it runs here instead, in a child started
like a command retriever (with the environment less the secrets, in a process
group of its own, every exchange bounded by ``timeout_s``), and this module
speaks the JSON-lines pipe for it:

    → {"op": "import", "spec": "module:factory", "root": "/repo" | null}
    → {"op": "factory", "options": {...}, "kind": "retriever" | "reranker"}
    ← {"ok": true, "name": "..."}
    → {"op": "index", "documents": [...]}       (a retriever)
    ← {"ok": true, "describe": {...}}
    → {"op": "search", "query": "...", "k": 10, "tags": [...]}
    ← {"ids": [...], "scores": [...], "texts": [...], "cost_usd": 0.0}
    → {"op": "rerank", "query": "...", "candidates": [{"id", "score", "text"}]}
    ← {"hits": [{"id", "score", "text"}], "cost_usd": 0.0}
    → {"op": "search_many", "queries": [{"query", "k", "tags"}, ...]}
    ← {"answers": [{"ids", "scores", "texts", "cost_usd"}, ...]}   (one per query, in order)

Search answers are columns (``texts`` left out when every text is empty), all of
a batch's in one line: each answer is then one ``json.dumps`` here and one
``json.loads`` there for the whole batch, and the parent checks each column in
bulk (search_answer.py) instead of one hit object at a time.

The index answer carries ``"batch": true`` when the object has a callable
``search_many(queries, k)`` (base.SearchesMany), so the parent may send
``search_many``; each batch is one call of it.
    → {"op": "describe"} / {"op": "close"}

A failure in the user's code is answered with ``{"error": "search() raised
KeyError: 'x'"}`` (``"config": true`` when the factory itself cannot be used),
and the parent names the factory in front of it. Only JSON comes back, never a
pickle, so nothing the user's code sends can run in the parent.

The protocol uses a duplicate of the original stdout; file descriptor 1 then
points at stderr, so whatever the user's code prints (from Python or from a C
library) lands in the stderr tail the parent quotes on failure, not in the pipe.
"""

from __future__ import annotations

import importlib
import json
import math
import os
import sys
from collections.abc import Callable, Mapping
from typing import IO, Any

from retrieval_eval.load.documents import Corpus, Document
from retrieval_eval.retrieval.base import Hit, SearchResult


class _Failure(Exception):
    def __init__(self, message: str, *, config: bool = False) -> None:
        super().__init__(message)
        self.config = config


class _Host:
    def __init__(self) -> None:
        self.module: Any = None
        self.attribute = ""
        self.inner: Any = None
        self.kind = "retriever"

    def handle(self, request: Mapping[str, Any]) -> dict[str, Any]:
        op = request.get("op")
        if op == "import":
            return self._import(str(request["spec"]), request.get("root"))
        if op == "factory":
            return self._factory(dict(request.get("options") or {}), str(request["kind"]))
        if self.inner is None:
            raise _Failure(f"`{op}` before the factory was called")
        if op == "index":
            documents = tuple(_document(raw) for raw in request["documents"])
            _call(lambda: self.inner.index(Corpus(documents=documents, location="")), "index()")
            batch = callable(getattr(self.inner, "search_many", None))
            return {"ok": True, "describe": self._describe(), **({"batch": True} if batch else {})}
        if op == "search_many":
            return self._search_many(request["queries"])
        if op == "search":
            query, k, tags = str(request["query"]), int(request["k"]), tuple(request["tags"])
            result = _call(lambda: self.inner.search(query, k, tags), "search()")
            return _columns(result, "search()")
        if op == "rerank":
            candidates = tuple(
                Hit(str(raw["id"]), float(raw["score"]), str(raw["text"]))
                for raw in request["candidates"]
            )
            result = _call(lambda: self.inner.rerank(str(request["query"]), candidates), "rerank()")
            return _answer(result, "rerank()")
        if op == "describe":
            return {"describe": self._describe()}
        if op == "close":
            close = getattr(self.inner, "close", None)
            if callable(close):
                _call(close, "close()")
            return {"ok": True}
        raise _Failure(f"unknown op {op!r}")

    def _search_many(self, raw_queries: list[Mapping[str, Any]]) -> dict[str, Any]:
        queries = [(str(raw["query"]), tuple(raw["tags"])) for raw in raw_queries]
        ks = {int(raw["k"]) for raw in raw_queries}
        if len(ks) != 1:
            raise _Failure("search_many: every query of one request must have the same k")
        (k,) = ks
        results = _call(lambda: self.inner.search_many(queries, k), "search_many()")
        try:
            results = list(results)
        except TypeError:
            raise _Failure(
                f"search_many() returned {type(results).__name__}, expected a list of SearchResult"
            ) from None
        if len(results) != len(queries):
            raise _Failure(
                f"search_many() returned {len(results)} results for {len(queries)} queries"
            )
        return {
            "answers": [
                _columns(result, f"search_many() result {n + 1}")
                for n, result in enumerate(results)
            ]
        }

    def _import(self, spec: str, root: object) -> dict[str, Any]:
        module_name, _, self.attribute = spec.partition(":")
        if isinstance(root, str) and root not in sys.path:
            sys.path.insert(0, root)
            importlib.invalidate_caches()
        try:
            self.module = _call(lambda: importlib.import_module(module_name), "import", wrap=False)
        except ImportError as error:
            raise _Failure(f"cannot import {module_name} ({error})", config=True) from None
        except _Failure:
            raise
        except Exception as error:
            raise _Failure(
                f"importing {module_name} raised {type(error).__name__}: {error}"
            ) from None
        return {"ok": True}

    def _factory(self, options: dict[str, Any], kind: str) -> dict[str, Any]:
        module_name = getattr(self.module, "__name__", "?")
        factory = getattr(self.module, self.attribute, None)
        if not callable(factory):
            raise _Failure(f"{module_name} has no callable {self.attribute}", config=True)
        inner = _call(lambda: factory(**options), "the factory")
        needed = ("index", "search", "describe") if kind == "retriever" else ("rerank", "describe")
        name = getattr(inner, "name", None)
        if any(not callable(getattr(inner, method, None)) for method in needed) or (
            kind == "retriever" and not hasattr(inner, "name")
        ):
            shape = (
                "the Retriever protocol (name, index(corpus), search(query, k, tags), describe())"
                if kind == "retriever"
                else "rerank(query, candidates) and describe()"
            )
            raise _Failure(
                f"the factory returned {type(inner).__name__}, which lacks {shape}", config=True
            )
        self.inner, self.kind = inner, kind
        return {"ok": True, "name": name if isinstance(name, str) and name else "custom"}

    def _describe(self) -> object:
        described = _call(self.inner.describe, "describe()")
        if not isinstance(described, Mapping):
            raise _Failure(f"describe() returned {type(described).__name__}, expected a mapping")
        return dict(described)


def _call(job: Callable[[], Any], what: str, *, wrap: bool = True) -> Any:
    """``job()``; the user's exception, or ``sys.exit``, as a one-line failure."""
    try:
        return job()
    except SystemExit as exit_request:
        raise _Failure(
            f"{what} called sys.exit({exit_request.code!r}); a retriever must raise an exception "
            "or return, never end the process"
        ) from None
    except _Failure:
        raise
    except BaseException as error:
        if not wrap and isinstance(error, Exception):
            raise
        raise _Failure(f"{what} raised {type(error).__name__}: {error}") from None


def _answer(result: object, what: str) -> dict[str, Any]:
    if not isinstance(result, SearchResult):
        raise _Failure(f"{what} returned {type(result).__name__}, expected a SearchResult")
    hits = []
    for position, hit in enumerate(result.hits):
        if not isinstance(hit, Hit):
            raise _Failure(f"{what}: hit {position} is a {type(hit).__name__}, expected a Hit")
        hits.append({"id": hit.doc_id, "score": _number(hit.score), "text": hit.text})
    return {"hits": hits, "cost_usd": _number(result.cost_usd)}


def _columns(result: object, what: str) -> dict[str, Any]:
    """A search answer in columns; the parent checks each value as it checks a command's."""
    if not isinstance(result, SearchResult):
        raise _Failure(f"{what} returned {type(result).__name__}, expected a SearchResult")
    try:
        hits = tuple(result.hits)  # the same tuple when it is one
    except TypeError:
        raise _Failure(
            f"{what}: hits is a {type(result.hits).__name__}, expected a tuple of Hit"
        ) from None
    if not set(map(type, hits)) <= {Hit}:
        for position, hit in enumerate(hits):
            if not isinstance(hit, Hit):
                raise _Failure(f"{what}: hit {position} is a {type(hit).__name__}, expected a Hit")
    answer: dict[str, Any] = {
        "ids": [hit.doc_id for hit in hits],
        "scores": [hit.score for hit in hits],
        "cost_usd": result.cost_usd,
    }
    texts = [hit.text for hit in hits]
    if texts.count("") != len(texts):
        answer["texts"] = texts
    return answer


def _encode(answer: dict[str, Any]) -> bytes:
    """One answer line. JSON has no NaN or infinity: a score or cost that is one is sent
    as text (``"nan"``), which the parent's checks refuse, naming the hit."""
    try:
        line = json.dumps(answer, ensure_ascii=False, default=str, allow_nan=False)
    except ValueError:
        for each in answer.get("answers", [answer]):
            if isinstance(each, dict):
                if isinstance(each.get("scores"), list):
                    each["scores"] = [_number(score) for score in each["scores"]]
                if "cost_usd" in each:
                    each["cost_usd"] = _number(each["cost_usd"])
        line = json.dumps(answer, ensure_ascii=False, default=str)
    return line.encode("utf-8") + b"\n"


def _number(value: object) -> object:
    """JSON has no NaN or infinity; spelled as text they still fail the parent's checks."""
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    return value


def _document(raw: Mapping[str, Any]) -> Document:
    return Document(
        id=raw["id"],
        title=raw["title"],
        text=raw["text"],
        tags=tuple(raw["tags"]),
        metadata=raw["metadata"],
        source=raw.get("source", ""),
    )


def _serve(requests: IO[bytes], answers: IO[bytes]) -> None:
    host = _Host()
    for line in requests:
        try:
            answer = host.handle(json.loads(line))
        except _Failure as failure:
            answer = {"error": str(failure), **({"config": True} if failure.config else {})}
        answers.write(_encode(answer))
        answers.flush()


def main() -> None:
    answers = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    _serve(sys.stdin.buffer, answers)


if __name__ == "__main__":
    main()
