"""retrieval-eval-history.jsonl: one line per evaluated push to the default branch.

The baseline says what the gate compares against; the history says how the numbers
moved over time, so the comment can show a sparkline of the last runs next to each
headline metric. It lives next to the baseline and is committed by the same workflow
step. Each line is ``{"commit": ..., "date": ..., "aggregates": {dataset: {metric:
value}}}``, and, for the merge of a pull request whose regression a maintainer accepted,
``"accepted_by"``, ``"pull_request"`` and ``"label"``; lines are only ever appended, so a
merge of two branches' histories is a plain concatenation.

The file sits in the tree a pull request controls, so it is read like a dataset: inside
the allowed roots, a regular file (never a FIFO or a device), and at most
``HISTORY_MAX_BYTES``. It only draws the trend, so a history that cannot be read is a
warning and a report without sparklines, never a failed run.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError

from retrieval_eval.errors import InputError
from retrieval_eval.fileio import atomic_write_text
from retrieval_eval.load.input_files import open_input

# Points in a sparkline: this run and the 19 before it.
SPARKLINE_POINTS = 20
# A line is a few hundred bytes per dataset: years of pushes fit many times over.
HISTORY_MAX_BYTES = 16 * 1024 * 1024


class HistoryEntry(BaseModel):
    # Later versions may add keys; an older reader keeps what it knows.
    model_config = ConfigDict(frozen=True, extra="ignore")

    commit: str | None
    date: datetime
    aggregates: dict[str, dict[str, float]]
    # The merge of an accepted regression: who accepted it, on which pull request, with
    # which label. Absent on every other line.
    accepted_by: str | None = None
    pull_request: int | None = None
    label: str | None = None


@dataclass(frozen=True)
class AcceptedBy:
    """What a history line records of an accepted regression."""

    login: str
    pull_request: int
    label: str


# The keys a line leaves out when they are empty.
_OPTIONAL_KEYS = ("accepted_by", "pull_request", "label")


def read_history(path: Path) -> list[HistoryEntry]:
    """Every line, oldest first; a missing file is an empty history.

    Raises InputError for a file outside the roots, not a regular file, too large, not
    UTF-8, or with a line that is not a history line."""
    text = _read_text(path)
    entries = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            entries.append(HistoryEntry.model_validate_json(line))
        except ValidationError as error:
            first = error.errors()[0]
            where = ".".join(str(part) for part in first["loc"])
            problem = f"{where}: {first['msg']}" if where else first["msg"]
            raise InputError(
                f"not a history line ({problem}); each line is "
                '{"commit": ..., "date": ..., "aggregates": {dataset: {metric: value}}}. '
                "Fix or delete the line",
                file=path,
                line=number,
            ) from None
    return entries


@dataclass(frozen=True)
class Trend:
    """What the report draws from the history: the values, or why there are none."""

    values: dict[str, dict[str, tuple[float, ...]]] = field(default_factory=dict)
    warning: str | None = None


def read_trend(path: Path) -> Trend:
    """The sparklines' values; a history that cannot be read gives none and a warning."""
    try:
        return Trend(recent_values(read_history(path)))
    except InputError as error:
        return Trend(warning=f"{error}; the report has no trend sparklines this time")


def _read_text(path: Path) -> str:
    if not os.path.lexists(path):
        return ""
    # open_input applies the roots and regular-file rules datasets are read under: a
    # symlink to /proc/self/fd/1 or /dev/zero is refused, never read.
    with open_input(path) as handle:
        data = handle.read(HISTORY_MAX_BYTES + 1)
    if len(data) > HISTORY_MAX_BYTES:
        raise InputError(
            f"larger than {HISTORY_MAX_BYTES // (1024 * 1024)} MiB, more than a history "
            "can grow to; refusing to read it",
            file=path,
        )
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise InputError(
            f"not UTF-8 text (byte {error.start}); each line is one JSON object", file=path
        ) from None


def recent_values(
    entries: Sequence[HistoryEntry], *, limit: int = SPARKLINE_POINTS - 1
) -> dict[str, dict[str, tuple[float, ...]]]:
    """dataset → metric → its last ``limit`` recorded values, oldest first."""
    series: dict[str, dict[str, list[float]]] = {}
    for entry in entries:
        for dataset, metrics in entry.aggregates.items():
            for metric, value in metrics.items():
                series.setdefault(dataset, {}).setdefault(metric, []).append(value)
    return {
        dataset: {metric: tuple(values[-limit:]) for metric, values in metrics.items()}
        for dataset, metrics in series.items()
    }


def append_history(
    path: Path,
    *,
    commit: str,
    date: datetime,
    aggregates: Mapping[str, Mapping[str, float]],
    accepted: AcceptedBy | None = None,
) -> None:
    """Add one line (the file is rewritten atomically, so a crash never leaves half a line)."""
    entry = HistoryEntry(
        commit=commit,
        date=date,
        aggregates={name: dict(metrics) for name, metrics in aggregates.items()},
        accepted_by=None if accepted is None else accepted.login,
        pull_request=None if accepted is None else accepted.pull_request,
        label=None if accepted is None else accepted.label,
    )
    data = entry.model_dump(mode="json")
    for key in _OPTIONAL_KEYS:
        if data[key] is None:
            del data[key]
    line = json.dumps(data, separators=(",", ":"), sort_keys=True)
    existing = _read_text(path)
    if existing and not existing.endswith("\n"):
        existing += "\n"
    atomic_write_text(path, existing + line + "\n")
