"""The user's own system as a long-running process speaking JSON lines.

Why a process and not HTTP: any language can read stdin and write stdout, the
process lives exactly as long as the evaluation, and there is no port to pick.
One request line in, one response line out (the protocol is in
docs/retrievers.md):

    → {"op": "index", "documents": [{"id", "title", "text", "tags", "metadata"}, ...]}
    ← {"ok": true, "describe": {...optional settings that change results...}}
    → {"op": "search", "query": "...", "k": 10, "tags": ["travel"]}
    ← {"hits": [{"id": "...", "score": 1.5, "text": "..."}], "cost_usd": 0.0001}
    ← {"error": "message"}   (to either request: the evaluation stops with it)

A process whose `index` answer carries ``"batch": true`` (or the most queries it
takes per request) is sent many queries in one request instead, and answers
each with one line, in the order asked:

    → {"op": "search_many", "queries": [{"query": "...", "k": 10, "tags": []}, ...]}
    ← {"hits": [...], "cost_usd": 0.0}     (one such line per query)
    ← {"answers": [{"hits": [...], "cost_usd": 0.0}, ...]}     (or all in one line)

Each query's latency is then the request's time divided by its queries. Any
answer may give its hits as columns instead, ``{"ids": [...], "scores": [...],
"texts": [...]}`` (``texts`` optional), which is cheaper to send and to check
(search_answer.py).

Closing stdin asks the process to exit. Everything the process says on stderr
is kept (last lines) and quoted when it fails. How the process is run, so that
nothing it does can hang the evaluation, is child_process.py's job.
"""

from __future__ import annotations

import json
import shlex
import time
import weakref
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import Any

from retrieval_eval.errors import RetrievalEvalError
from retrieval_eval.load.documents import Corpus
from retrieval_eval.retrieval.answers import MAX_ANSWER_BYTES, TopHits
from retrieval_eval.retrieval.base import SearchResult
from retrieval_eval.retrieval.external.answer_reader import BATCH, read_answer, read_batch
from retrieval_eval.retrieval.external.child_process import (
    ChildExited,
    ChildProcess,
    ChildTimeout,
    LineTooLong,
)
from retrieval_eval.retrieval.external.search_answer import search_result
from retrieval_eval.retrieval.timed import QuerySpec, TimedResult, search_one_by_one
from retrieval_eval.trust.boundary import BoundaryError

_EXIT_GRACE_S = 5.0
# Queries per `search_many` request when the retriever says only `"batch": true`: the
# pipe's round trip is paid once for this many, and one request's answers stay small.
SEARCH_BATCH = 64
# Answer lines up to this many characters are parsed whole: their parsed hits take at
# most a few MB, whatever k is.
_PARSED_WHOLE = 1 << 18
# A `search_many` line (all of its answers, in one) is parsed whole up to that many per
# query, and this many in all: at most some tens of MB parsed, and 64 answers of 100 hits
# with their texts still take the C decoder.
_PARSED_WHOLE_BATCH = 1 << 22
# The most a retriever may ask for with `"batch": N`.
MAX_SEARCH_BATCH = 4096


def search_batch(value: object, label: str) -> int | None:
    """Queries per `search_many` request from the `index` answer's `batch` (None: one
    `search` per query)."""
    if value is None or value is False:
        return None
    if value is True:
        return SEARCH_BATCH
    if isinstance(value, int) and 1 <= value <= MAX_SEARCH_BATCH:
        return value
    raise RetrievalEvalError(
        f"{label}: `batch` in the index answer must be true, false or a number of queries "
        f"from 1 to {MAX_SEARCH_BATCH:,}, got {_short(value)}"
    )


class CommandRetriever:
    name = "custom"
    setting = "retrievers.custom.timeout_s"  # what the user raises when a call is just slow

    def __init__(
        self, command: Sequence[str], *, cwd: Path | None = None, timeout_s: float = 120.0
    ):
        self.command = list(command)
        self.cwd = cwd
        self.timeout_s = timeout_s
        self.label = f"custom retriever `{shlex.join(self.command)}`"
        self._process: ChildProcess | None = None
        self._described: dict[str, Any] = {}
        self._batch: int | None = None  # queries per `search_many`; None: one `search` each
        self._finalizer: weakref.finalize[Any, Any] | None = None

    def index(self, corpus: Corpus) -> None:
        answer = self._ask("index", {"op": "index", "documents": index_documents(corpus)})
        if answer.get("ok") is not True:
            raise RetrievalEvalError(
                f'{self.label}: answer to `index` must be {{"ok": true}}, got {_short(answer)}'
            )
        describe = answer.get("describe", {})
        if not isinstance(describe, dict):
            raise RetrievalEvalError(
                f"{self.label}: `describe` in the index answer must be an object"
            )
        self._described = describe
        self._batch = search_batch(answer.get("batch"), self.label)

    def search(self, query: str, k: int, tags: Sequence[str] = ()) -> SearchResult:
        def who() -> str:
            return f"{self.label}: answer to `search` for {_query(query)}"

        streamed: list[TopHits] = []  # the TopHits of a large answer, read streaming

        def stream(raw: str) -> Any:
            streamed.append(TopHits(k, who=who()))
            return read_answer(raw, streamed[0])

        answer = self._ask(
            "search", {"op": "search", "query": query, "k": k, "tags": list(tags)}, stream
        )
        return search_result(answer, k, who, streamed[0] if streamed else None)

    def search_queries(
        self,
        queries: Sequence[QuerySpec],
        k: int,
        *,
        on_result: Callable[[TimedResult], None] | None = None,
    ) -> list[TimedResult]:
        """Every query: in `search_many` requests when the retriever declared it can take
        them, else one `search` each. In a batch, each query's latency is the request's
        time divided by its queries (the mean; one slow query is spread over its batch)."""
        if self._batch is None or not queries:
            return search_one_by_one(self, queries, k, on_result=on_result)
        self._search_many(queries[:1], k)  # the unrecorded warm-up, as one by one
        results: list[TimedResult] = []
        for start in range(0, len(queries), self._batch):
            batch = queries[start : start + self._batch]
            started = time.perf_counter()
            answers = self._search_many(batch, k)
            each = (time.perf_counter() - started) / len(batch)
            for query, result in zip(batch, answers, strict=True):
                timed = TimedResult(query.query_id, result, each)
                results.append(timed)
                if on_result is not None:
                    on_result(timed)
        return results

    def _search_many(self, queries: Sequence[QuerySpec], k: int) -> list[SearchResult]:
        request = {
            "op": "search_many",
            "queries": [{"query": q.text, "k": k, "tags": list(q.tags)} for q in queries],
        }
        self._send("search_many", request)
        count = len(queries)

        def who(position: int) -> str:
            return (
                f"{self.label}: answer {position + 1} of {count} to `search_many` "
                f"(for {_query(queries[position].text)})"
            )

        # Each query's TopHits is made when its hits are first streamed (a large line).
        tops: dict[int, TopHits] = {}

        def top_of(position: int) -> TopHits:
            if position not in tops:
                if position >= count:
                    raise _answer_count(self.label, count, f"more than {count:,}")
                tops[position] = TopHits(k, who=who(position))
            return tops[position]

        first = self._receive(
            "search_many",
            lambda raw: read_batch(raw, top_of(0), top_of),
            whole=min(_PARSED_WHOLE * count, _PARSED_WHOLE_BATCH),
        )
        if BATCH not in first:  # one line per query
            results = [search_result(first, k, partial(who, 0), tops.get(0))]
            for position in range(1, count):
                answer = self._receive("search_many", partial(_read_one, top_of, position))
                results.append(search_result(answer, k, partial(who, position), tops.get(position)))
            return results
        answers = first[BATCH]
        if not isinstance(answers, list) or len(answers) != count:
            got = f"{len(answers):,}" if isinstance(answers, list) else _short(answers)
            raise _answer_count(self.label, count, got)
        results = []
        for position, answer in enumerate(answers):
            if not isinstance(answer, dict):
                raise RetrievalEvalError(
                    f"{who(position)} must be a JSON object, got {_short(answer)}"
                )
            if "error" in answer:
                raise self._reported("search_many", answer)
            results.append(search_result(answer, k, partial(who, position), tops.get(position)))
        return results

    def describe(self) -> Mapping[str, object]:
        return {"retriever": self.name, "command": self.command, **self._described}

    def close(self) -> None:
        """Ask the process to exit (stdin closed), then make sure it and its group have."""
        if self._finalizer is not None:
            self._finalizer()
        self._process = None

    # --- the pipe -----------------------------------------------------------------

    def _start(self) -> ChildProcess:
        try:
            process = ChildProcess(self.command, cwd=self.cwd)
        except (OSError, BoundaryError) as error:
            raise RetrievalEvalError(f"{self.label} could not be started: {error}") from None
        self._finalizer = weakref.finalize(self, process.stop, min(_EXIT_GRACE_S, self.timeout_s))
        return process

    def _ask(
        self,
        op: str,
        request: dict[str, Any],
        stream: Callable[[str], Any] | None = None,
    ) -> dict[str, Any]:
        # One deadline for the whole exchange: writing the request and reading its answer.
        deadline = self._send(op, request)
        return self._receive(op, stream, deadline)

    def _send(self, op: str, request: dict[str, Any]) -> float:
        """Write the request line; returns the deadline it was given."""
        if self._process is None:
            self._process = self._start()
        process = self._process
        line = json.dumps(request, ensure_ascii=False, default=str).encode("utf-8") + b"\n"
        deadline = time.monotonic() + self.timeout_s
        try:
            process.write(line, deadline)
        except ChildTimeout:
            raise self._timed_out(op, f"did not read the `{op}` request") from None
        except ChildExited:
            raise self._exited(op) from None
        return deadline

    def _receive(
        self,
        op: str,
        stream: Callable[[str], Any] | None = None,
        deadline: float | None = None,
        *,
        whole: int = _PARSED_WHOLE,
    ) -> dict[str, Any]:
        """The next answer line (by ``deadline``, else within ``timeout_s`` from now: each
        answer to `search_many` has that long after the one before). ``stream`` reads a
        line longer than ``whole`` characters instead of ``json.loads``, keeping only each
        query's best hits."""
        process = self._process
        if process is None:
            raise self._exited(op)
        if deadline is None:
            deadline = time.monotonic() + self.timeout_s
        try:
            raw = process.read_line(deadline, MAX_ANSWER_BYTES).decode("utf-8", errors="replace")
        except ChildTimeout:
            raise self._timed_out(op, f"did not answer `{op}`") from None
        except LineTooLong:
            self.close()
            raise RetrievalEvalError(
                f"{self.label}: its answer to `{op}` ran past {MAX_ANSWER_BYTES:,} bytes "
                "without ending its line; an answer is one JSON line, ended by a newline"
            ) from None
        except ChildExited:
            raise self._exited(op) from None
        try:
            # A large search answer's hits are checked and cut to k while they are read; a
            # small one is parsed whole (by the C decoder, several times faster), its hits
            # checked after.
            streamed = stream is not None and len(raw) > whole
            answer = stream(raw) if streamed and stream else json.loads(raw)
        except json.JSONDecodeError as error:
            raise RetrievalEvalError(
                f"{self.label}: answer to `{op}` is not JSON ({error.msg}): {raw[:200]!r}"
            ) from None
        except RecursionError:
            raise RetrievalEvalError(
                f"{self.label}: answer to `{op}` is JSON nested too deeply to read"
            ) from None
        if not isinstance(answer, dict):
            raise RetrievalEvalError(
                f"{self.label}: answer to `{op}` must be a JSON object, got {_short(answer)}"
            )
        if "error" in answer:
            raise self._reported(op, answer)
        return answer

    def _reported(self, op: str, answer: Mapping[str, Any]) -> RetrievalEvalError:
        return RetrievalEvalError(f"{self.label} reported an error on `{op}`: {answer['error']}")

    def _timed_out(self, op: str, what: str) -> RetrievalEvalError:
        self.close()  # the child killed itself and its group already; this forgets it
        return RetrievalEvalError(
            f"{self.label} {what} within {self.timeout_s:g} s "
            f"(raise {self.setting} if it is just slow)"
        )

    def _exited(self, op: str) -> RetrievalEvalError:
        process = self._process
        code: int | None = None
        if process is not None:
            # It closed its pipe; give it a moment to exit, else close() kills it.
            code = process.wait_exit(min(_EXIT_GRACE_S, self.timeout_s))
            self.close()  # also waits (briefly) for the last stderr lines to be read
            tail = list(process.stderr_tail)
        else:
            tail = []
        stderr = "; stderr: " + " | ".join(tail) if tail else ""
        return RetrievalEvalError(
            f"{self.label} exited with code {code} before answering `{op}`{stderr}"
        )


def index_documents(corpus: Corpus, *, source: bool = False) -> list[dict[str, Any]]:
    """The corpus as the `index` request carries it (``source`` too, for a factory's
    ``Document``s, which have that field)."""
    return [
        {
            "id": doc.id,
            "title": doc.title,
            "text": doc.text,
            "tags": list(doc.tags),
            "metadata": dict(doc.metadata),
            **({"source": doc.source} if source else {}),
        }
        for doc in corpus.documents
    ]


def _read_one(top_of: Callable[[int], TopHits], position: int, raw: str) -> Any:
    """A large answer line to query ``position`` of a `search_many`, read streaming."""
    return read_answer(raw, top_of(position))


def _answer_count(label: str, count: int, got: str) -> RetrievalEvalError:
    return RetrievalEvalError(
        f"{label}: `answers` to `search_many` must be a list of one answer per query "
        f"({count:,}), got {got}"
    )


def _query(text: str) -> str:
    """The query as errors name it (a long one cut)."""
    return f"query {text!r}" if len(text) <= 80 else f"query {text[:77]!r}..."


def _short(value: object) -> str:
    text = json.dumps(value, default=str)
    return text if len(text) <= 200 else text[:197] + "..."
