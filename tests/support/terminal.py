"""Run the `retrieval-eval` console script with its stdout on a pseudo-terminal, as a
person at a terminal runs it; stderr stays a pipe so the two can be told apart."""

from __future__ import annotations

import os
import subprocess
import threading
from dataclasses import dataclass
from pathlib import Path

from tests.author.cli import CONSOLE_SCRIPT


@dataclass(frozen=True)
class TerminalRun:
    returncode: int
    stdout: str  # what the terminal showed (a pty turns "\n" into "\r\n"; undone here)
    stderr: str


def on_terminal(
    *args: str,
    cwd: Path,
    env: dict[str, str] | None = None,
    timeout: float = 600,
    keys: str | None = None,
) -> TerminalRun:
    """``keys``: typed at the terminal (stdin is the terminal too); None: stdin is empty."""
    base = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "GITHUB_"))}
    for name in ("CI", "NO_COLOR"):
        base.pop(name, None)
    master, slave = os.openpty()
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
    if keys is not None:
        # Typed ahead: the terminal holds the lines until the program reads them.
        os.write(master, keys.encode("utf-8"))
    try:
        process = subprocess.run(
            [str(CONSOLE_SCRIPT), *args],
            cwd=cwd,
            env={**base, **(env or {})},
            stdin=slave if keys is not None else subprocess.DEVNULL,
            stdout=slave,
            stderr=subprocess.PIPE,
            timeout=timeout,
            check=False,
        )
    finally:
        os.close(slave)
        reader.join(timeout)
        os.close(master)
    shown = b"".join(chunks).decode("utf-8", "replace").replace("\r\n", "\n")
    return TerminalRun(process.returncode, shown, process.stderr.decode("utf-8", "replace"))
