"""Error types shared by every stage, and the process exit codes they map to.

Users fix bad input fastest when the message names the file and line, so every
input error carries an optional location and renders as ``FILE:LINE: message``.
"""

from __future__ import annotations

from enum import IntEnum
from pathlib import Path


class ExitCode(IntEnum):
    """The contract with CI: 1 means "your change broke something", 2 means "we could not tell"."""

    OK = 0
    FAILED = 1  # gate failure or invalid datasets
    ERROR = 2  # bad configuration, unreadable file, retriever failure


class RetrievalEvalError(Exception):
    """An error the user can act on; the CLI prints it without a traceback."""

    exit_code: ExitCode = ExitCode.ERROR

    def __init__(self, message: str, *, file: Path | str | None = None, line: int | None = None):
        super().__init__(message)
        self.message = message
        self.file = str(file) if file is not None else None
        self.line = line

    def __str__(self) -> str:
        if self.file is None:
            return self.message
        if self.line is None:
            return f"{self.file}: {self.message}"
        return f"{self.file}:{self.line}: {self.message}"


class InputError(RetrievalEvalError):
    """A corpus, dataset, baseline or configuration file the user must fix."""


class ConfigError(RetrievalEvalError):
    """A setting (file key, flag or Action input) with a bad value."""
