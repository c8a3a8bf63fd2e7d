"""Atomic writes: a crash or an error never leaves a half-written baseline or report.

The temporary file is created with mode 0666 and the process umask applied, as
``open()`` would create the file itself (``mkstemp`` would give 0600: the
container runs as root, and a later workflow step running as the runner user
could not read the baseline or the report).
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path

from retrieval_eval.errors import RetrievalEvalError
from retrieval_eval.trust.redaction import clean


def atomic_write_bytes(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
    while True:
        tmp = path.parent / f".{path.name}.{secrets.token_hex(6)}.tmp"
        try:
            fd = os.open(tmp, flags, 0o666)
        except FileExistsError:
            continue
        break
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def atomic_write_text(path: Path, text: str) -> None:
    """Text files are reports, baselines and hand-over files: secrets are masked first.
    A full disk (or any refusal to write) is an error naming the file, not a crash."""
    try:
        atomic_write_bytes(path, clean(text).encode("utf-8"))
    except OSError as error:
        raise RetrievalEvalError(f"could not write: {error.strerror or error}", file=path) from None
