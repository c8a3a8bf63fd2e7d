"""Read a log of queries people sent (`retrieval-eval import queries`): JSONL or CSV.

Each record has a ``query`` and, optionally, the documents the person clicked or the
answer cited (``clicked``, or ``cited``: a JSON list of ids, or in CSV ids separated by
``|``), how many times it was sent (``count``, a positive integer, default 1) and any
other fields (a column to stratify the sample by). A record that does not read is an
error at its line, ``FILE:LINE: what to fix``, so the log can be fixed or filtered.
"""

from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from retrieval_eval.errors import InputError

LogFormat = Literal["jsonl", "csv"]
CLICK_FIELDS = ("clicked", "cited")
CSV_ID_SEPARATOR = "|"
_KNOWN = {"query", "count", *CLICK_FIELDS}


@dataclass(frozen=True)
class LoggedQuery:
    line: int
    query: str
    clicked: tuple[str, ...] = ()
    count: int = 1
    fields: dict[str, str] = field(default_factory=dict)  # the other fields, as text


def log_format(path: Path, given: str | None) -> LogFormat:
    if given is not None:
        return "csv" if given == "csv" else "jsonl"
    suffix = path.suffix.lower()
    if suffix in (".jsonl", ".ndjson", ".json"):
        return "jsonl"
    if suffix in (".csv", ".tsv"):
        return "csv"
    raise InputError(
        "cannot tell the log's format from its name; name it .jsonl or .csv, or pass --format",
        file=path,
    )


def read_query_log(path: Path, fmt: LogFormat) -> list[LoggedQuery]:
    try:
        text = path.read_bytes().decode("utf-8-sig")
    except OSError as error:
        raise InputError(f"cannot read the log: {error.strerror or error}", file=path) from None
    except UnicodeDecodeError as error:
        raise InputError(f"the log is not UTF-8 ({error.reason})", file=path) from None
    return parse_query_log(text, fmt, path)


def parse_query_log(text: str, fmt: LogFormat, path: Path) -> list[LoggedQuery]:
    """Every record of the log; an ``InputError`` at the first one that does not read."""
    records = _jsonl(text, path) if fmt == "jsonl" else _csv(text, path)
    if not records:
        raise InputError("the log has no queries", file=path)
    return records


def _jsonl(text: str, path: Path) -> list[LoggedQuery]:
    records = []
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
        except (ValueError, RecursionError) as error:
            reason = error.msg if isinstance(error, json.JSONDecodeError) else "too deeply nested"
            raise InputError(f"not valid JSON ({reason})", file=path, line=number) from None
        if not isinstance(data, dict):
            raise InputError(
                'each line must be a JSON object such as {"query": "..."}', file=path, line=number
            )
        clicked = _json_clicks(data, path, number)
        fields = {
            str(k): v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)
            for k, v in data.items()
            if k not in _KNOWN
        }
        records.append(
            LoggedQuery(
                line=number,
                query=_query(data.get("query"), path, number),
                clicked=clicked,
                count=_count(data.get("count", 1), path, number),
                fields=fields,
            )
        )
    return records


def _json_clicks(data: dict[str, object], path: Path, number: int) -> tuple[str, ...]:
    ids: list[str] = []
    for name in CLICK_FIELDS:
        value = data.get(name)
        if value is None:
            continue
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
            raise InputError(
                f"{name} must be a list of document ids (non-empty strings)", file=path, line=number
            )
        ids += value
    return tuple(dict.fromkeys(ids))


def _csv(text: str, path: Path) -> list[LoggedQuery]:
    delimiter = "\t" if path.suffix.lower() == ".tsv" else ","
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter, strict=True)
    try:
        header = next(reader)
    except StopIteration:
        return []
    except csv.Error as error:
        raise InputError(f"not valid CSV ({error})", file=path, line=1) from None
    names = [name.strip() for name in header]
    if "query" not in names:
        raise InputError(
            f"the header has no `query` column (it has: {', '.join(names) or 'nothing'})",
            file=path,
            line=1,
        )
    records: list[LoggedQuery] = []
    while True:
        start = reader.line_num + 1
        try:
            row = next(reader)
        except StopIteration:
            return records
        except csv.Error as error:
            raise InputError(f"not valid CSV ({error})", file=path, line=start) from None
        if not row or all(not cell.strip() for cell in row):
            continue
        if len(row) != len(names):
            raise InputError(
                f"has {len(row)} fields where the header has {len(names)}", file=path, line=start
            )
        values = dict(zip(names, row, strict=True))
        clicked: list[str] = []
        for name in CLICK_FIELDS:
            clicked += [
                i.strip() for i in values.get(name, "").split(CSV_ID_SEPARATOR) if i.strip()
            ]
        count_text = values.get("count", "").strip()
        records.append(
            LoggedQuery(
                line=start,
                query=_query(values["query"], path, start),
                clicked=tuple(dict.fromkeys(clicked)),
                count=_count(count_text or 1, path, start, text=True),
                fields={k: v for k, v in values.items() if k not in _KNOWN},
            )
        )


def _query(value: object, path: Path, number: int) -> str:
    if not isinstance(value, str) or not value.strip():
        raise InputError("has no query (a non-empty `query` text)", file=path, line=number)
    return value


def _count(value: object, path: Path, number: int, *, text: bool = False) -> int:
    if text and isinstance(value, str):
        value = int(value) if value.isascii() and value.isdigit() else value
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise InputError(
            f"count must be a positive whole number, not {value!r}", file=path, line=number
        )
    return value
