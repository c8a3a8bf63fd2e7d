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
from pathlib import Path
from typing import Any

from retrieval_eval.errors import RetrievalEvalError
from retrieval_eval.load.documents import Corpus
from retrieval_eval.retrieval.answers import TopHits
from retrieval_eval.retrieval.base import SearchResult
from retrieval_eval.retrieval.external.answer_reader import Streamed, read_answer
from retrieval_eval.retrieval.external.child_process import ChildExited, ChildProcess, ChildTimeout

_EXIT_GRACE_S = 5.0


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

    def search(self, query: str, k: int, tags: Sequence[str] = ()) -> SearchResult:
        top = TopHits(k, who=self.label)
        answer = self._ask(
            "search",
            {"op": "search", "query": query, "k": k, "tags": list(tags)},
            on_hit=top.add_answer,
        )
        raw_hits = answer.get("hits")
        if not isinstance(raw_hits, list):
            raise RetrievalEvalError(
                f"{self.label}: answer to `search` lacks a `hits` list: {_short(answer)}"
            )
        if not isinstance(raw_hits, Streamed):  # `hits` was not a plain top-level array
            for position, raw in enumerate(raw_hits):
                top.add_answer(position, raw)
        return top.result(answer.get("cost_usd", 0.0))

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
        except OSError as error:
            raise RetrievalEvalError(f"{self.label} could not be started: {error}") from None
        self._finalizer = weakref.finalize(self, process.stop, min(_EXIT_GRACE_S, self.timeout_s))
        return process

    def _ask(
        self,
        op: str,
        request: dict[str, Any],
        on_hit: Callable[[int, Any], None] | None = None,
    ) -> dict[str, Any]:
        if self._process is None:
            self._process = self._start()
        process = self._process
        line = json.dumps(request, ensure_ascii=False, default=str).encode("utf-8") + b"\n"
        # One deadline for the whole exchange: writing the request and reading its answer.
        deadline = time.monotonic() + self.timeout_s
        try:
            process.write(line, deadline)
        except ChildTimeout:
            raise self._timed_out(op, f"did not read the `{op}` request") from None
        except ChildExited:
            raise self._exited(op) from None
        try:
            raw = process.read_line(deadline).decode("utf-8", errors="replace")
        except ChildTimeout:
            raise self._timed_out(op, f"did not answer `{op}`") from None
        except ChildExited:
            raise self._exited(op) from None
        try:
            # A search answer's hits are checked and cut to k while they are read.
            answer = json.loads(raw) if on_hit is None else read_answer(raw, on_hit)
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


def _short(value: object) -> str:
    text = json.dumps(value, default=str)
    return text if len(text) <= 200 else text[:197] + "..."
