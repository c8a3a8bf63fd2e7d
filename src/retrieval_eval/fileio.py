"""Atomic writes: a crash or an error never leaves a half-written baseline or report."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from retrieval_eval.errors import RetrievalEvalError
from retrieval_eval.trust.redaction import clean


def atomic_write_bytes(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp_name, path)
    except BaseException:
        Path(tmp_name).unlink(missing_ok=True)
        raise


def atomic_write_text(path: Path, text: str) -> None:
    """Text files are reports, baselines and hand-over files: secrets are masked first.
    A full disk (or any refusal to write) is an error naming the file, not a crash."""
    try:
        atomic_write_bytes(path, clean(text).encode("utf-8"))
    except OSError as error:
        raise RetrievalEvalError(f"could not write: {error.strerror or error}", file=path) from None
