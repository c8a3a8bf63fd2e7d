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
is kept (last lines) and quoted when it fails.
"""

from __future__ import annotations

import contextlib
import json
import os
import selectors
import shlex
import subprocess
import threading
import time
import weakref
from collections import deque
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO, Any

from retrieval_eval.errors import RetrievalEvalError
from retrieval_eval.load.documents import Corpus
from retrieval_eval.retrieval.answers import normalise_hits
from retrieval_eval.retrieval.base import Hit, SearchResult

_STDERR_LINES = 20
_EXIT_GRACE_S = 5.0


class CommandRetriever:
    name = "custom"

    def __init__(
        self, command: Sequence[str], *, cwd: Path | None = None, timeout_s: float = 120.0
    ):
        self.command = list(command)
        self.cwd = cwd
        self.timeout_s = timeout_s
        self.label = f"custom retriever `{shlex.join(self.command)}`"
        self._process: subprocess.Popen[bytes] | None = None
        self._buffer = b""
        self._stderr: deque[str] = deque(maxlen=_STDERR_LINES)
        self._described: dict[str, Any] = {}
        self._finalizer: weakref.finalize[Any, Any] | None = None
        self._drainer: threading.Thread | None = None

    def index(self, corpus: Corpus) -> None:
        documents = [
            {
                "id": doc.id,
                "title": doc.title,
                "text": doc.text,
                "tags": list(doc.tags),
                "metadata": dict(doc.metadata),
            }
            for doc in corpus.documents
        ]
        answer = self._ask("index", {"op": "index", "documents": documents})
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
        answer = self._ask("search", {"op": "search", "query": query, "k": k, "tags": list(tags)})
        raw_hits = answer.get("hits")
        if not isinstance(raw_hits, list):
            raise RetrievalEvalError(
                f"{self.label}: answer to `search` lacks a `hits` list: {_short(answer)}"
            )
        hits: list[Hit] = []
        for position, raw in enumerate(raw_hits):
            if not isinstance(raw, dict) or "id" not in raw or "score" not in raw:
                raise RetrievalEvalError(
                    f"{self.label}: hit {position} must be an object with `id` and `score`, "
                    f"got {_short(raw)}"
                )
            hits.append(Hit(doc_id=raw["id"], score=raw["score"], text=raw.get("text", "")))
        return normalise_hits(hits, k, cost_usd=answer.get("cost_usd", 0.0), who=self.label)

    def describe(self) -> Mapping[str, object]:
        return {"retriever": self.name, "command": self.command, **self._described}

    def close(self) -> None:
        """Ask the process to exit (stdin closed), then make sure it has."""
        if self._finalizer is not None:
            self._finalizer()
        self._process = None

    # --- the pipe -----------------------------------------------------------------

    def _start(self) -> subprocess.Popen[bytes]:
        try:
            process = subprocess.Popen(
                self.command,
                cwd=self.cwd,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
            )
        except OSError as error:
            raise RetrievalEvalError(f"{self.label} could not be started: {error}") from None
        assert process.stderr is not None
        self._drainer = threading.Thread(
            target=_drain, args=(process.stderr, self._stderr), daemon=True
        )
        self._drainer.start()
        self._finalizer = weakref.finalize(self, _stop, process, self._drainer)
        return process

    def _ask(self, op: str, request: dict[str, Any]) -> dict[str, Any]:
        if self._process is None:
            self._process = self._start()
        process = self._process
        assert process.stdin is not None
        line = json.dumps(request, ensure_ascii=False, default=str).encode("utf-8") + b"\n"
        try:
            process.stdin.write(line)
            process.stdin.flush()
        except (BrokenPipeError, ValueError):
            raise self._exited(op) from None
        raw = self._read_line(op)
        try:
            answer = json.loads(raw)
        except json.JSONDecodeError as error:
            raise RetrievalEvalError(
                f"{self.label}: answer to `{op}` is not JSON ({error.msg}): {raw[:200]!r}"
            ) from None
        if not isinstance(answer, dict):
            raise RetrievalEvalError(
                f"{self.label}: answer to `{op}` must be a JSON object, got {_short(answer)}"
            )
        if "error" in answer:
            raise RetrievalEvalError(f"{self.label} reported an error on `{op}`: {answer['error']}")
        return answer

    def _read_line(self, op: str) -> str:
        process = self._process
        assert process is not None and process.stdout is not None
        fd = process.stdout.fileno()
        deadline = time.monotonic() + self.timeout_s
        with selectors.DefaultSelector() as selector:
            selector.register(fd, selectors.EVENT_READ)
            while b"\n" not in self._buffer:
                remaining = deadline - time.monotonic()
                if remaining <= 0 or not selector.select(remaining):
                    process.kill()  # it is hung: asking it to exit would only wait longer
                    self.close()
                    raise RetrievalEvalError(
                        f"{self.label} did not answer `{op}` within {self.timeout_s:g} s "
                        "(raise retrievers.custom.timeout_s if it is just slow)"
                    )
                data = os.read(fd, 1 << 16)
                if not data:
                    raise self._exited(op)
                self._buffer += data
        line, _, self._buffer = self._buffer.partition(b"\n")
        return line.decode("utf-8", errors="replace")

    def _exited(self, op: str) -> RetrievalEvalError:
        process = self._process
        code: int | None = None
        if process is not None:
            # It closed its stdout; give it a moment to exit, else close() kills it.
            with contextlib.suppress(subprocess.TimeoutExpired):
                code = process.wait(timeout=_EXIT_GRACE_S)
        self.close()  # also waits for the last stderr lines to be read
        tail = "; stderr: " + " | ".join(self._stderr) if self._stderr else ""
        return RetrievalEvalError(
            f"{self.label} exited with code {code} before answering `{op}`{tail}"
        )


def _drain(stream: IO[bytes], tail: deque[str]) -> None:
    for raw in stream:
        tail.append(raw.decode("utf-8", errors="replace").rstrip())


def _stop(process: subprocess.Popen[bytes], drainer: threading.Thread) -> None:
    if process.stdin is not None and not process.stdin.closed:
        with contextlib.suppress(BrokenPipeError):
            process.stdin.close()
    try:
        process.wait(timeout=_EXIT_GRACE_S)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
    drainer.join(timeout=_EXIT_GRACE_S)
    for stream in (process.stdout, process.stderr):
        if stream is not None:
            stream.close()


def _short(value: object) -> str:
    text = json.dumps(value, default=str)
    return text if len(text) <= 200 else text[:197] + "..."
