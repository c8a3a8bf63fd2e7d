"""A real HTTP server on 127.0.0.1 that answers the Messages API like Anthropic's.

Tests reach it with the real ``anthropic`` client through ``base_url``, so the
client's request building, headers, retries and response parsing all run.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

# Given the request's JSON body, return (status, reply text or error body).
Responder = Callable[[dict[str, Any]], tuple[int, str]]


@dataclass
class RecordedRequest:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]


@dataclass
class FakeAnthropic:
    api_key: str = "test-key"
    responder: Responder = field(default=lambda body: (200, '{"score": 1.0}'))
    requests: list[RecordedRequest] = field(default_factory=list)
    _server: ThreadingHTTPServer | None = None
    _thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        assert self._server is not None, "start() the server first"
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def __enter__(self) -> FakeAnthropic:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", "0"))
                body = json.loads(self.rfile.read(length) or b"{}")
                fake.requests.append(RecordedRequest(self.path, dict(self.headers), body))
                # Current clients send a bearer token; older ones send x-api-key.
                offered = {self.headers.get("x-api-key"), self.headers.get("authorization")}
                if not offered & {fake.api_key, f"Bearer {fake.api_key}"}:
                    self._send(401, _error("authentication_error", "invalid API key"))
                    return
                if self.path != "/v1/messages":
                    self._send(404, _error("not_found_error", self.path))
                    return
                status, text = fake.responder(body)
                if status != 200:
                    self._send(status, _error("api_error", text))
                    return
                self._send(200, _message(body.get("model", ""), text))

            def _send(self, status: int, payload: dict[str, Any]) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                # The client honours this, so retry tests wait a millisecond, not seconds.
                self.send_header("retry-after-ms", "1")
                self.end_headers()
                self.wfile.write(data)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        # A short poll interval keeps shutdown() (and so each test) fast.
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._server is not None and self._thread is not None
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()


def _message(model: str, text: str) -> dict[str, Any]:
    return {
        "id": "msg_fake",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [{"type": "text", "text": text}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 1200, "output_tokens": 8},
    }


def _error(kind: str, message: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": kind, "message": message}}
