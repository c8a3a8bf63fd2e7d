"""A search service behind HTTP: ``POST {"query", "k", "tags"}`` → ``{"hits": [...]}``.

The service owns its index; ``index()`` only checks that its host accepts
connections, so a wrong URL fails before any query. Queries are sent
``concurrency`` at a time from a thread pool sharing one httpx client (its
connection pool is thread-safe). Each query's latency is measured on the
client, from sending the request to holding the parsed answer, retries
included: that is what a user of the service waits for.

Retries (tenacity): on 5xx, 429 and transport errors (refused, reset, timed
out), up to ``retries`` more attempts with exponential backoff from
``backoff_s``. Any other 4xx, an answer that is not JSON, or one without the
mapped fields stops the evaluation with a one-line error.
"""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any
from urllib.parse import urlsplit

import httpx
from tenacity import (
    RetryError,
    Retrying,
    retry_if_exception,
    stop_after_attempt,
    wait_exponential,
)

from retrieval_eval.errors import ConfigError, RetrievalEvalError
from retrieval_eval.load.documents import Corpus
from retrieval_eval.retrieval.answers import MAX_ANSWER_BYTES, normalise_hits
from retrieval_eval.retrieval.base import Hit, SearchResult
from retrieval_eval.retrieval.external.json_path import MISSING, follow, parse_path
from retrieval_eval.retrieval.external.services_config import HttpConfig
from retrieval_eval.retrieval.timed import QuerySpec, TimedResult

_MAX_BACKOFF_S = 30.0


class _Retryable(Exception):
    """A 5xx or 429 answer: worth asking again after a pause."""

    def __init__(self, status: int, reason: str):
        super().__init__(f"{status} {reason}")
        self.status = status


def _retryable(error: BaseException) -> bool:
    return isinstance(error, _Retryable | httpx.TransportError)


class HttpRetriever:
    name = "http"

    def __init__(self, config: HttpConfig):
        self.config = config
        self.label = f"http retriever {config.url}"
        self._headers = config.headers("retrievers.http")
        self._paths = {
            field: parse_path(getattr(config, field))
            for field in ("hits_path", "id_field", "score_field", "text_field", "cost_field")
        }
        self._texts: dict[str, str] = {}
        self._client: httpx.Client | None = None

    # --- the Retriever protocol ------------------------------------------------------

    def index(self, corpus: Corpus) -> None:
        self._texts = {doc.id: doc.text for doc in corpus.documents}
        self._check_reachable()
        self.close()
        self._client = httpx.Client(
            headers=self._headers,
            timeout=httpx.Timeout(self.config.timeout_s),
            limits=httpx.Limits(max_connections=self.config.concurrency),
            follow_redirects=False,
            trust_env=False,  # a proxy from the environment must not see the auth headers
        )

    def search(self, query: str, k: int, tags: Sequence[str] = ()) -> SearchResult:
        return self._ask(query, k, tags)

    def search_queries(
        self,
        queries: Sequence[QuerySpec],
        k: int,
        *,
        on_result: Callable[[TimedResult], None] | None = None,
    ) -> list[TimedResult]:
        """One unrecorded warm-up query, then every query, ``concurrency`` in flight."""
        warm_up = queries[0]
        self._ask(warm_up.text, k, warm_up.tags)
        results: list[TimedResult] = []
        with ThreadPoolExecutor(
            max_workers=self.config.concurrency, thread_name_prefix="retrieval-eval-http"
        ) as pool:
            futures: list[Future[TimedResult]] = [
                pool.submit(self._timed, query, k) for query in queries
            ]
            try:
                for future in futures:
                    timed = future.result()
                    results.append(timed)
                    if on_result is not None:
                        on_result(timed)
            except BaseException:
                for future in futures:
                    future.cancel()
                raise
        return results

    def describe(self) -> Mapping[str, object]:
        # Settings that change which hits come back; never the header values.
        return {
            "retriever": self.name,
            "url": self.config.url,
            "hits_path": self.config.hits_path,
            "id_field": self.config.id_field,
            "score_field": self.config.score_field,
            "text_field": self.config.text_field,
            "headers": sorted(self.config.headers_env),
        }

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None

    # --- one request -----------------------------------------------------------------

    def _timed(self, query: QuerySpec, k: int) -> TimedResult:
        started = time.perf_counter()
        result = self._ask(query.text, k, query.tags)
        return TimedResult(query.query_id, result, time.perf_counter() - started)

    def _ask(self, query: str, k: int, tags: Sequence[str]) -> SearchResult:
        client = self._client
        if client is None:
            raise RetrievalEvalError(f"{self.label}: search() called before index()")
        body = request_body(self.config, query, k, tags)
        attempts = self.config.retries + 1
        retrying = Retrying(
            stop=stop_after_attempt(attempts),
            wait=wait_exponential(multiplier=self.config.backoff_s, max=_MAX_BACKOFF_S),
            retry=retry_if_exception(_retryable),
            reraise=False,
        )
        try:
            response = retrying(self._post, client, body)
        except RetryError as error:
            last = error.last_attempt.exception()
            raise RetrievalEvalError(
                f"{self.label}: {_describe_failure(last, self.config.timeout_s)} "
                f"(gave up after {attempts} attempt{'s' if attempts > 1 else ''})"
            ) from None
        return self._hits(response, k)

    def _post(self, client: httpx.Client, body: dict[str, Any]) -> httpx.Response:
        with client.stream("POST", self.config.url, json=body) as streamed:
            response = self._bounded(streamed)
        if response.status_code >= 500 or response.status_code == 429:
            raise _Retryable(response.status_code, response.reason_phrase)
        if response.status_code >= 400:
            raise RetrievalEvalError(
                f"{self.label}: {response.status_code} {response.reason_phrase}: "
                f"{_excerpt(response.text)}"
            )
        return response

    def _bounded(self, streamed: httpx.Response) -> httpx.Response:
        """The answer read whole, failing as soon as its body (decompressed) runs past
        ``MAX_ANSWER_BYTES``: a body that never ends must not take the machine's memory."""
        chunks: list[bytes] = []
        size = 0
        for chunk in streamed.iter_bytes():
            size += len(chunk)
            if size > MAX_ANSWER_BYTES:
                raise RetrievalEvalError(
                    f"{self.label}: its answer ran past {MAX_ANSWER_BYTES:,} bytes; "
                    "an answer that long is not a search result"
                )
            chunks.append(chunk)
        # The body is decoded already: the copy keeps only the headers that say how to read
        # it as text.
        kept = {k: v for k, v in streamed.headers.items() if k.lower() == "content-type"}
        return httpx.Response(
            streamed.status_code,
            headers=kept,
            content=b"".join(chunks),
            request=streamed.request,
            extensions={"reason_phrase": streamed.reason_phrase.encode("ascii", "replace")},
        )

    def _hits(self, response: httpx.Response, k: int) -> SearchResult:
        try:
            answer = response.json()
        except ValueError as error:
            raise RetrievalEvalError(
                f"{self.label}: the answer is not JSON ({error}): {_excerpt(response.text)}"
            ) from None
        raw_hits = follow(answer, self._paths["hits_path"])
        if not isinstance(raw_hits, list):
            raise RetrievalEvalError(
                f"{self.label}: the answer has no list at hits_path {self.config.hits_path!r}: "
                f"{_excerpt(response.text)}"
            )
        hits: list[Hit] = []
        for position, raw in enumerate(raw_hits):
            doc_id = follow(raw, self._paths["id_field"])
            score = follow(raw, self._paths["score_field"])
            text = follow(raw, self._paths["text_field"])
            if isinstance(doc_id, int) and not isinstance(doc_id, bool):
                doc_id = str(doc_id)
            if not isinstance(doc_id, str) or score is MISSING:
                raise RetrievalEvalError(
                    f"{self.label}: hit {position} lacks {self.config.id_field!r} (a string) "
                    f"or {self.config.score_field!r}: {_excerpt(str(raw))}"
                )
            if text is MISSING or text is None:
                text = self._texts.get(doc_id, "")
            hits.append(Hit(doc_id=doc_id, score=score, text=text))  # type: ignore[arg-type]
        cost = follow(answer, self._paths["cost_field"])
        cost = 0.0 if cost is MISSING or cost is None else cost
        return normalise_hits(hits, k, cost_usd=cost, who=self.label)  # type: ignore[arg-type]

    def _check_reachable(self) -> None:
        """Connect to the service's host and port, sending nothing: fail before any query."""
        parts = urlsplit(self.config.url)
        host = parts.hostname or ""
        port = parts.port or (443 if parts.scheme == "https" else 80)
        try:
            with socket.create_connection((host, port), timeout=self.config.timeout_s):
                pass
        except OSError as error:
            reason = error.strerror or str(error) or type(error).__name__
            raise ConfigError(
                f"retrievers.http.url: cannot connect to {host}:{port} ({reason})"
            ) from None


def _describe_failure(error: BaseException | None, timeout_s: float) -> str:
    if isinstance(error, _Retryable):
        return f"answered {error}"
    if isinstance(error, httpx.TimeoutException):
        return f"no answer within timeout_s = {timeout_s:g} s"
    if isinstance(error, httpx.TransportError):
        return f"{type(error).__name__}: {error}"
    return str(error)


def _excerpt(text: str) -> str:
    flat = " ".join(text.split())
    return repr(flat if len(flat) <= 200 else flat[:197] + "...")


def request_body(config: HttpConfig, query: str, k: int, tags: Sequence[str]) -> Any:
    """The JSON sent for one query: ours, or the configured template with its "$query",
    "$k" and "$tags" string values replaced (a tag-filtered query takes ``filtered_body``
    when it is set)."""
    template = config.filtered_body if tags and config.filtered_body else config.body
    if tags and template is not None and '"$tags"' not in template:
        raise ConfigError(
            'retrievers.http: a fixture filters by tags, and body has no "$tags": set '
            "filtered_body to the request that filters (a filter must never be dropped)"
        )
    if template is None:
        return {"query": query, "k": k, "tags": list(tags)}
    values: dict[str, Any] = {"$query": query, "$k": k, "$tags": list(tags)}

    def fill(value: Any) -> Any:
        if isinstance(value, str):
            return values.get(value, value)
        if isinstance(value, list):
            return [fill(item) for item in value]
        if isinstance(value, dict):
            return {key: fill(item) for key, item in value.items()}
        return value

    return fill(json.loads(template))
