"""The commit status: the check a branch protection rule can require."""

from __future__ import annotations

from typing import Literal

MAX_DESCRIPTION_CHARS = 140  # GitHub rejects longer descriptions with 422

StatusState = Literal["success", "failure", "error"]

# An established baseline or a skipped run must not block merging: nothing regressed.
_STATE_OF_VERDICT: dict[str, StatusState] = {
    "passed": "success",
    "baseline-established": "success",
    "skipped": "success",
    "regression": "failure",
    "threshold": "failure",
    "invalid": "failure",
    "error": "error",
}


def state_for(verdict: str) -> StatusState:
    return _STATE_OF_VERDICT.get(verdict, "error")


def fit_description(text: str) -> str:
    """One line, at most 140 characters, cut with an ellipsis rather than rejected."""
    line = " ".join(text.split())
    if len(line) <= MAX_DESCRIPTION_CHARS:
        return line
    return line[: MAX_DESCRIPTION_CHARS - 1].rstrip() + "…"


def skipped_description(paths: str) -> str:
    return fit_description(f"skipped: no changes under {paths}")
