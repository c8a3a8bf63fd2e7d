"""retrieval-eval-history.jsonl: one line per evaluated push to the default branch.

The baseline says what the gate compares against; the history says how the numbers
moved over time, so the comment can show a sparkline of the last runs next to each
headline metric. It lives next to the baseline and is committed by the same workflow
step. Each line is ``{"commit": ..., "date": ..., "aggregates": {dataset: {metric:
value}}}``; lines are only ever appended, so a merge of two branches' histories is a
plain concatenation.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import datetime
from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError

from retrieval_eval.errors import InputError
from retrieval_eval.fileio import atomic_write_text

# Points in a sparkline: this run and the 19 before it.
SPARKLINE_POINTS = 20


class HistoryEntry(BaseModel):
    # Later versions may add keys; an older reader keeps what it knows.
    model_config = ConfigDict(frozen=True, extra="ignore")

    commit: str | None
    date: datetime
    aggregates: dict[str, dict[str, float]]


def read_history(path: Path) -> list[HistoryEntry]:
    """Every line, oldest first; a missing file is an empty history."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return []
    except OSError as error:
        raise InputError(f"cannot read the history: {error.strerror}", file=path) from None
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
    path: Path, *, commit: str, date: datetime, aggregates: Mapping[str, Mapping[str, float]]
) -> None:
    """Add one line (the file is rewritten atomically, so a crash never leaves half a line)."""
    entry = HistoryEntry(
        commit=commit,
        date=date,
        aggregates={name: dict(metrics) for name, metrics in aggregates.items()},
    )
    line = json.dumps(entry.model_dump(mode="json"), separators=(",", ":"), sort_keys=True)
    try:
        existing = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        existing = ""
    if existing and not existing.endswith("\n"):
        existing += "\n"
    atomic_write_text(path, existing + line + "\n")
