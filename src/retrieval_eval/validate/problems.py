"""A problem found in a dataset, printed as ``FILE:LINE: message`` (what editors and CI jump to)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Problem:
    file: Path
    line: int
    message: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.message}"

    def github_annotation(self) -> str:
        """The workflow command that shows this problem on the pull request's diff."""
        file = _escape_property(str(self.file))
        return f"::error file={file},line={self.line}::{_escape_data(self.message)}"


def _escape_data(text: str) -> str:
    # GitHub's workflow-command escaping: a raw newline would end the command early.
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")
