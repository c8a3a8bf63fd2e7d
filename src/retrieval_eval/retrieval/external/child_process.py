"""A long-running child process spoken to over pipes, where nothing can block for ever.

The child is the user's retriever (code from the pull request under review), so
it is assumed to misbehave: it may never read its stdin, never answer, ignore
the request to exit, or leave a background process holding our pipes. Hence:

- it runs in a process group of its own, and stopping it kills the whole group,
  then every orphan it left (one that left the group with ``setsid`` and was
  orphaned by a double fork), which this process adopts as a child subreaper
  (``retrieval_eval.trust.processes``);
- every write, read and the shutdown are bounded by a deadline;
- stderr is drained by a thread that polls a stop flag instead of blocking in a
  read, so stopping never waits on a grandchild that still holds the pipe.

It gets our environment, from which the edge has already taken the secrets
(``retrieval_eval.trust.child_env``), and no descriptor but its three pipes. When we
run as root it runs as the boundary's user, with a HOME and TMPDIR of its own
(``retrieval_eval.trust.boundary``).
"""

from __future__ import annotations

import contextlib
import os
import selectors
import signal
import subprocess
import threading
import time
from collections import deque
from collections.abc import Sequence
from pathlib import Path

from retrieval_eval.trust.boundary import spawn_options
from retrieval_eval.trust.processes import become_subreaper, children, end_orphans

STDERR_LINES = 20
_POLL_S = 0.05
_CHUNK = 1 << 16
_READ_CHUNK = 1 << 20


# The children still running, which stopping another one must leave alone.
_RUNNING: set[int] = set()


class ChildTimeout(Exception):
    """The deadline passed; the child has been killed."""


class ChildExited(Exception):
    """The child closed its end of a pipe (it exited or crashed)."""


class LineTooLong(Exception):
    """A line on its stdout ran past the limit without ending; the child has been killed."""


class ChildProcess:
    def __init__(self, command: Sequence[str], *, cwd: Path | None) -> None:
        """Start it; ``OSError`` when it cannot be started, ``BoundaryError`` when it may
        not be (as root in the image, without the boundary's user)."""
        options = spawn_options()
        become_subreaper()  # before it can fork: its orphans must come to us
        # What was our child before it started cannot be its orphan: stopping it spares those.
        self._earlier = children()
        self._process = subprocess.Popen(
            list(command),
            cwd=cwd,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            process_group=0,
            **options,
        )
        _RUNNING.add(self._process.pid)
        assert self._process.stdin and self._process.stdout and self._process.stderr
        self._stdin = self._process.stdin.fileno()
        self._stdout = self._process.stdout.fileno()
        os.set_blocking(self._stdin, False)
        # One selector for each pipe for the child's life: making and closing one per request
        # cost more than the request itself (two system calls each, on every search).
        self._writable = selectors.DefaultSelector()
        self._writable.register(self._stdin, selectors.EVENT_WRITE)
        self._readable = selectors.DefaultSelector()
        self._readable.register(self._stdout, selectors.EVENT_READ)
        self._buffer = b""
        self.stderr_tail: deque[str] = deque(maxlen=STDERR_LINES)
        self._stop = threading.Event()
        self._drainer = threading.Thread(target=self._drain_stderr, daemon=True)
        self._drainer.start()
        self.exit_code: int | None = None
        self._stopped = False

    @property
    def pid(self) -> int:
        return self._process.pid

    def write(self, data: bytes, deadline: float) -> None:
        """All of ``data`` onto its stdin before ``deadline`` (``time.monotonic``)."""
        view = memoryview(data)
        while view:
            if not self._writable.select(_remaining(deadline)):
                self._kill()
                raise ChildTimeout
            try:
                written = os.write(self._stdin, view[:_CHUNK])
            except BlockingIOError:
                continue
            except (BrokenPipeError, OSError):
                raise ChildExited from None
            view = view[written:]

    def read_line(self, deadline: float, limit: int) -> bytes:
        """The next line from its stdout (without the newline), before ``deadline``; a
        line of more than ``limit`` bytes raises ``LineTooLong`` once that many are read."""
        # Chunks are collected and joined once: growing one bytes object (and searching all
        # of it for the newline) each time is quadratic in a 100 MB answer.
        chunks = [self._buffer]
        held = len(self._buffer)
        newline = self._buffer.find(b"\n")
        while newline < 0:
            if held > limit:
                self._kill()
                raise LineTooLong
            if not self._readable.select(_remaining(deadline)):
                self._kill()
                raise ChildTimeout
            data = os.read(self._stdout, _READ_CHUNK)
            if not data:
                raise ChildExited
            newline = data.find(b"\n")
            if newline >= 0:
                newline += held
            chunks.append(data)
            held += len(data)
        if newline > limit:
            self._kill()
            raise LineTooLong
        buffered = b"".join(chunks)
        self._buffer = buffered[newline + 1 :]
        return buffered[:newline]

    def stop(self, grace_s: float) -> int | None:
        """Close its stdin (the protocol's "please exit"), give it ``grace_s`` to exit, then
        kill its whole group and every orphan either way (background processes it left,
        in its group or not, must not outlive it).
        Returns its exit code, None when it had to be killed. Never blocks for long."""
        if self._stopped:
            return self.exit_code
        self._stopped = True
        with contextlib.suppress(OSError):
            self._process.stdin.close()  # type: ignore[union-attr]
        exited = self._exited_within(grace_s)
        self._kill_group()
        code = self._process.wait()
        self.exit_code = code if exited else None
        # What left the group is now our orphan (we are its subreaper): end it too.
        _RUNNING.discard(self._process.pid)
        end_orphans(keep=_RUNNING | self._earlier)
        # Its last words: EOF comes once nothing holds the pipe, which the kills ensure unless
        # a process escaped them (no subreaper); then the drainer is told to stop polling.
        self._drainer.join(timeout=1.0)
        self._stop.set()
        self._drainer.join(timeout=1.0)
        self._writable.close()
        self._readable.close()
        with contextlib.suppress(OSError):
            self._process.stdout.close()  # type: ignore[union-attr]
        if not self._drainer.is_alive():
            with contextlib.suppress(OSError):
                self._process.stderr.close()  # type: ignore[union-attr]
        return self.exit_code

    def wait_exit(self, grace_s: float) -> int | None:
        """After it closed stdout: its exit code if it exits within ``grace_s``, else None."""
        return self._process.returncode if self._exited_within(grace_s, reap=True) else None

    # --- internals ---------------------------------------------------------------------------

    def _exited_within(self, seconds: float, *, reap: bool = False) -> bool:
        """Poll without reaping, so the pid (and with it the group id) cannot be reused
        before ``_kill_group`` runs."""
        deadline = time.monotonic() + seconds
        while True:
            if self._process.returncode is not None:
                return True
            try:
                info = os.waitid(os.P_PID, self._process.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
            except ChildProcessError:
                return True
            if info is not None:
                if reap:
                    self._process.wait()
                return True
            if time.monotonic() >= deadline:
                return False
            time.sleep(_POLL_S)

    def _kill(self) -> None:
        self._kill_group()
        self.stop(grace_s=0.0)

    def _kill_group(self) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self._process.pid, signal.SIGKILL)

    def _drain_stderr(self) -> None:
        assert self._process.stderr is not None
        fd = self._process.stderr.fileno()
        pending = b""
        with selectors.DefaultSelector() as selector:
            selector.register(fd, selectors.EVENT_READ)
            while not self._stop.is_set():
                if not selector.select(_POLL_S):
                    continue
                try:
                    data = os.read(fd, _CHUNK)
                except OSError:
                    break
                if not data:
                    break
                pending += data
                *lines, pending = pending.split(b"\n")
                for line in lines:
                    self.stderr_tail.append(line.decode("utf-8", errors="replace").rstrip())
                pending = pending[-_CHUNK:]  # a line that never ends must not grow for ever
        if pending.strip():
            self.stderr_tail.append(pending.decode("utf-8", errors="replace").rstrip())


def _remaining(deadline: float) -> float:
    return max(0.0, deadline - time.monotonic())
