"""Stream the lines of a JSONL file with bounded memory.

Golden datasets and corpora can be large (a 1 GB corpus, a 10 MB document on
one line), so nothing here ever holds more than one line in memory, and a line
longer than ``max_line_bytes`` is reported as a problem and skipped in chunks
instead of being read whole. Editors on Windows add a BOM and CRLF endings and
people leave blank lines; all of that is accepted.
"""

from __future__ import annotations

import json
import re
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO, NamedTuple

from retrieval_eval.errors import InputError
from retrieval_eval.load.input_files import (
    MAX_LINES,
    UTF8_BOM,
    open_maybe_gzipped,
    too_many_lines,
    wide_encoding_problem,
)

# 64 MiB: six times the 10 MB line the format promises to read, yet small
# enough that one runaway line (a whole file without newlines) cannot exhaust
# memory on a CI runner.
DEFAULT_MAX_LINE_BYTES = 64 * 1024 * 1024

_SKIP_CHUNK_BYTES = 1024 * 1024
_LINE_END = b"\r\n"


class Line(NamedTuple):
    """One non-blank line. ``problem`` is set (and ``text`` empty) when the line cannot be read."""

    number: int
    text: str
    problem: str | None = None


def iter_jsonl_lines(path: Path, *, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES) -> Iterator[Line]:
    """Yield every non-blank line of ``path`` with its 1-based line number.

    A name ending in ``.gz`` is decompressed as it is read. Raises InputError only
    when the file itself cannot be opened or read on (a truncated ``.gz``, one that
    inflates past its bound, more than ``MAX_LINES`` lines); problems
    with single lines (invalid UTF-8, too long) are yielded so callers can report
    them all and carry on.
    """
    handle = open_maybe_gzipped(path)
    with handle:
        number = 0
        while True:
            raw = _read_line(handle, max_line_bytes + 1, path, number + 1)
            if not raw:
                return
            number += 1
            if number > MAX_LINES:
                raise too_many_lines(path)
            if number == 1 and (problem := wide_encoding_problem(raw)) is not None:
                yield Line(number, "", problem)
                return
            if len(raw) > max_line_bytes and not raw.endswith(b"\n"):
                _skip_rest_of_line(handle, path, number)
                yield Line(
                    number,
                    "",
                    f"line is longer than {max_line_bytes:,} bytes; split the record or shorten it",
                )
                continue
            start = len(UTF8_BOM) if number == 1 and raw.startswith(UTF8_BOM) else 0
            end = len(raw)
            while end > start and raw[end - 1] in _LINE_END:
                end -= 1
            try:
                # Decoding a memoryview slice avoids a second copy of a 10 MB line.
                text = str(memoryview(raw)[start:end], "utf-8")
            except UnicodeDecodeError as error:
                yield Line(
                    number,
                    "",
                    f"invalid UTF-8 at byte {start + error.start + 1} of the line; "
                    "save the file as UTF-8",
                )
                continue
            del raw
            if text and not text.isspace():
                yield Line(number, text)


def _read_line(handle: BinaryIO, size: int, path: Path, number: int) -> bytes:
    """One line (at most ``size`` bytes); a file that breaks while being read (a truncated
    or corrupt ``.gz``, an I/O error) stops the read at that line."""
    try:
        return handle.readline(size)
    except (OSError, EOFError, zlib.error) as error:
        raise InputError(
            f"cannot read the file from here on: {error}", file=path, line=number
        ) from None


def _skip_rest_of_line(handle: BinaryIO, path: Path, number: int) -> None:
    while True:
        chunk = _read_line(handle, _SKIP_CHUNK_BYTES, path, number)
        if not chunk or chunk.endswith(b"\n"):
            return


def parse_json_object(text: str) -> dict[str, Any] | str:
    """Parse one JSONL record; return the object, or a message saying what is wrong with it.

    Duplicate keys and NaN/Infinity are rejected because ``json`` would accept
    them silently (keeping the last value), and a typo must not pass unnoticed.
    """
    try:
        value = json.loads(
            text, object_pairs_hook=_reject_duplicate_keys, parse_constant=_reject_constant
        )
    except _DuplicateKey as error:
        return f"duplicate key {error.key!r} in the JSON object"
    except RecursionError:
        return "not valid JSON: nested too deeply to read; flatten the record"
    except ValueError as error:
        if isinstance(error, json.JSONDecodeError):
            hint = ""
            if "\r" in text:  # lines end at \n; a lone \r leaves several records on one line
                hint = "; the line holds a lone \\r (old Mac line endings?): end lines with \\n"
            return f"not valid JSON: {error.msg} (column {error.colno}){hint}"
        return f"not valid JSON: {error}"
    if not isinstance(value, dict):
        kind = _json_type_name(value)
        return f"not a JSON object (got {kind}); each line must be one {{...}} object"
    if _SURROGATE_ESCAPE.search(text) and (lone := _lone_surrogate(value)) is not None:
        return (
            f"contains a lone surrogate {lone} (a \\u escape of half a UTF-16 pair), "
            "which is not valid Unicode; remove it or complete the pair"
        )
    return value


_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_LONE_SURROGATE = re.compile(r"[\ud800-\udfff]")


def _lone_surrogate(value: object) -> str | None:
    """The first unpaired surrogate in any key or string (``json`` turns a lone ``\\ud800``
    into one, and it cannot be written out as UTF-8 later)."""
    pending: list[object] = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, str):
            if found := _LONE_SURROGATE.search(item):
                return f"\\u{ord(found.group()):04x}"
        elif isinstance(item, dict):
            pending.extend(item.keys())
            pending.extend(item.values())
        elif isinstance(item, list):
            pending.extend(item)
    return None


class _DuplicateKey(ValueError):
    def __init__(self, key: str):
        super().__init__(key)
        self.key = key


def _reject_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise _DuplicateKey(key)
        result[key] = value
    return result


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not allowed in JSON")


def _json_type_name(value: object) -> str:
    if isinstance(value, list):
        return "an array"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    return "null"


def iter_lines_or_raise(path: Path) -> Iterator[tuple[int, str]]:
    """For corpus files: the first bad line stops the load, since the corpus is
    an input to the evaluation rather than the thing under review."""
    for line in iter_jsonl_lines(path):
        if line.problem is not None:
            raise InputError(line.problem, file=path, line=line.number)
        yield line.number, line.text


def iter_objects_or_raise(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    for number, text in iter_lines_or_raise(path):
        record = parse_json_object(text)
        if isinstance(record, str):
            raise InputError(record, file=path, line=number)
        yield number, record
