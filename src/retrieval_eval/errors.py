"""Error types shared by every stage, and the process exit code each one maps to.

Users fix bad input fastest when the message names the file and line, so every
input error carries an optional location and renders as ``FILE:LINE: message``.
FILE is shown relative to the working directory when it lies inside it (the repository
root in the Action, and where the user stands at a terminal): that is the path a reader
of the repository knows, and it leaves a 140-character commit status room for the message.
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

    @property
    def shown_file(self) -> str | None:
        """``file`` as the reader knows it: relative to the working directory when inside it."""
        if self.file is None:
            return None
        return shown_path(self.file)

    def __str__(self) -> str:
        if self.file is None:
            return self.message
        if self.line is None:
            return f"{self.shown_file}: {self.message}"
        return f"{self.shown_file}:{self.line}: {self.message}"


def shown_path(file: Path | str) -> str:
    """A path relative to the working directory when it lies inside it, else as given."""
    path = Path(file)
    if not path.is_absolute():
        return str(file)
    try:
        here = Path.cwd()
    except OSError:  # the working directory was removed
        return str(file)
    return path.relative_to(here).as_posix() if path.is_relative_to(here) else str(file)


class InputError(RetrievalEvalError):
    """A corpus, dataset, baseline or configuration file the user must fix."""


class ConfigError(RetrievalEvalError):
    """A setting (file key, flag or Action input) with a bad value."""
