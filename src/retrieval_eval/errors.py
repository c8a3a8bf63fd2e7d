"""Error types shared by every stage, and the process exit code each one maps to.

Users fix bad input fastest when the message names the file and line, so every
input error carries an optional location and renders as ``FILE:LINE: message``.
"""

from __future__ import annotations

from pathlib import Path

from retrieval_eval.vocabulary import ExitCode


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
