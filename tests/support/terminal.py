"""Run the `retrieval-eval` console script with its stdout on a pseudo-terminal, as a
person at a terminal runs it; stderr stays a pipe so the two can be told apart."""

from __future__ import annotations

import fcntl
import os
import struct
import subprocess
import termios
import threading
from dataclasses import dataclass
from pathlib import Path

from tests.author.cli import CONSOLE_SCRIPT


@dataclass(frozen=True)
class TerminalRun:
    returncode: int
    stdout: str  # what the terminal showed (a pty turns "\n" into "\r\n"; undone here)
    stderr: str  # empty with ``stderr_too``: the terminal showed it, in ``stdout``


def on_terminal(
    *args: str,
    cwd: Path,
    env: dict[str, str] | None = None,
    timeout: float = 600,
    stderr_too: bool = False,
    stdin: str | None = None,
) -> TerminalRun:
    """``stderr_too`` puts stderr on the terminal as well (where progress bars are drawn);
    ``stdin`` is typed at the terminal (the keys a person presses, Enter included)."""
    base = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "GITHUB_"))}
    for name in ("CI", "NO_COLOR"):
        base.pop(name, None)
    master, slave = os.openpty()
    # A person's terminal has a size; a fresh pty's is 0 × 0, where a bar has no room.
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 160, 0, 0))
    chunks: list[bytes] = []

    def drain() -> None:
        while True:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # EIO: every writer closed the terminal
                return
            if not chunk:
                return
            chunks.append(chunk)

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    if stdin is not None:
        # The terminal's line discipline holds typed lines until the program reads them.
        os.write(master, stdin.encode("utf-8"))
    try:
        process = subprocess.run(
            [str(CONSOLE_SCRIPT), *args],
            cwd=cwd,
            env={**base, **(env or {})},
            stdin=subprocess.DEVNULL if stdin is None else slave,
            stdout=slave,
            stderr=slave if stderr_too else subprocess.PIPE,
            timeout=timeout,
            check=False,
        )
    finally:
        os.close(slave)
        reader.join(timeout)
        os.close(master)
    shown = b"".join(chunks).decode("utf-8", "replace").replace("\r\n", "\n")
    errors = process.stderr.decode("utf-8", "replace") if process.stderr is not None else ""
    return TerminalRun(process.returncode, shown, errors)
