"""report.json, report.md and report.html, written side by side and atomically."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from operator import attrgetter
from pathlib import Path

from pydantic_core import PydanticSerializationError

from retrieval_eval.fileio import atomic_write_text, atomic_write_utf8
from retrieval_eval.render.links import ReportLinks
from retrieval_eval.render.markdown import render_markdown
from retrieval_eval.render.report_html import render_html
from retrieval_eval.results import RunReport
from retrieval_eval.trust.redaction import clean_utf8

REPORT_JSON = "report.json"
REPORT_MARKDOWN = "report.md"
REPORT_HTML = "report.html"


def report_json_bytes(report: RunReport) -> bytes:
    """``json.dumps(report.model_dump(mode="json"), indent=2, ensure_ascii=False)`` encoded
    as UTF-8, byte for byte, mostly written by pydantic's serializer: the standard
    library's indenting encoder is pure Python and takes seconds on a report of 100,000
    queries. The serializer writes bytes, and they are repaired and written as bytes: a
    report of 100,000 queries is a text of 100 MB, and each pass over it as a str (decode,
    search, encode) costs a tenth of a second or more."""
    if not _all_finite(report):
        # The serializer writes NaN and infinities as null; the standard library as NaN or
        # Infinity (null in untyped values): that rare report is written as it always was.
        return _stdlib_json_bytes(report)
    try:
        data = report.__pydantic_serializer__.to_json(report, indent=2)
    except (PydanticSerializationError, UnicodeError, ValueError):
        return _stdlib_json_bytes(report)  # e.g. a lone surrogate: the old error, or its text
    return _python_floats(data, last=b"\n")


def _stdlib_json_bytes(report: RunReport) -> bytes:
    text = json.dumps(report.model_dump(mode="json"), indent=2, ensure_ascii=False) + "\n"
    return clean_utf8(text)  # its lone surrogates replaced, as every written text's are


# QueryResult's float fields, read directly for each query (the bulk of a report); the
# rest of the report is small enough to be walked whole.
QUERY_FLOATS = ("minimum_mrr", "latency_ms", "cost_usd", "judge_score", "judge_cost_usd")


def _all_finite(report: RunReport) -> bool:
    """Whether every float in the report is finite. A sum of finite floats can only
    overflow to infinity, which errs on the safe side (the standard library writes it)."""
    rest = report.model_dump(exclude={"datasets": {"__all__": {"queries"}}})
    total = _float_sum(rest)
    for dataset in report.datasets:
        queries = dataset.queries
        # Whole columns at C speed (map): a report holds 100,000 queries or more.
        total += sum(map(sum, map(dict.values, map(attrgetter("metrics"), queries))))
        for name in QUERY_FLOATS:
            values = list(map(attrgetter(name), queries))
            total += sum([v for v in values if v is not None] if None in values else values)
    return math.isfinite(total)


def _float_sum(value: object) -> float:
    if isinstance(value, float):
        return value
    if isinstance(value, dict):
        return sum(_float_sum(v) for v in value.values())
    if isinstance(value, list | tuple | set | frozenset):
        return sum(_float_sum(v) for v in value)
    return 0.0


# The serializer writes the shortest round-trip digits as repr() does, but 1e-5 <= |x| < 1e-4
# as 0.00001 (repr: 1e-05) and one-digit negative exponents as 1e-7 (repr: 1e-07). Only
# those texts are looked at; every line of indented JSON is one value or one bracket, so a
# number is a whole line's value, never part of a string.
_NUMBER_LINE = re.compile(rb' *(?:"(?:[^"\\]|\\.)*": )?(-?[0-9][0-9.eE+-]*),?')
# "e-" is found by its "-", which a search finds at memory speed (memchr) and which is rare
# in a report, where "e" is everywhere; ids full of hyphens make it common too, and after
# this many the pair itself is searched for.
_HYPHENS_VISITED = 10_000


def _suspect_lines(data: bytes) -> set[int]:
    """The start of every line holding "e-" or "0.0000"."""
    found: list[int] = []
    position = data.find(b"-")
    visited = 0
    while position >= 0:
        visited += 1
        if visited > _HYPHENS_VISITED:
            found += _positions(data, b"e-", start=position - 1)
            break
        if position > 0 and data[position - 1] == ord("e"):
            found.append(position)
        position = data.find(b"-", position + 1)
    found += _positions(data, b"0.0000", start=0)
    return {data.rfind(b"\n", 0, position) + 1 for position in found}


def _positions(data: bytes, text: bytes, *, start: int) -> list[int]:
    found = []
    position = data.find(text, max(start, 0))
    while position >= 0:
        found.append(position)
        position = data.find(text, position + len(text))
    return found


def _python_floats(data: bytes, *, last: bytes) -> bytes:
    """``data`` with those floats respelled, and ``last`` after it (in the one copy made)."""
    lines = _suspect_lines(data)
    if not lines:
        return data + last
    whole = memoryview(data)  # the pieces between the repairs, joined without a copy each
    pieces: list[bytes | memoryview] = []
    done = 0
    for start in sorted(lines):
        end = data.find(b"\n", start)
        line = _NUMBER_LINE.fullmatch(data, start, len(data) if end < 0 else end)
        if line is None or not any(c in line.group(1) for c in (b".", b"e")):
            continue  # a string, or an integer
        pieces += [whole[done : line.start(1)], repr(float(line.group(1))).encode("ascii")]
        done = line.end(1)
    pieces += [whole[done:], last]
    return b"".join(pieces)


@dataclass(frozen=True)
class ReportFiles:
    json_path: Path
    markdown_path: Path
    markdown: str  # report.md's text, kept so nothing renders or reads it again
    html_path: Path


def write_report_files(
    report: RunReport,
    report_dir: Path,
    *,
    notices: Sequence[str] = (),
    links: ReportLinks | None = None,
) -> ReportFiles:
    """Every text is rendered before any file is replaced, so a rendering error leaves
    the previous files intact rather than a mismatched set. ``links`` (the Action's)
    make the Markdown and the page link to the run and to each fixture's line."""
    json_data = report_json_bytes(report)
    markdown = render_markdown(report, max_chars=None, notices=notices, links=links)
    html = render_html(report, notices=notices, links=links)
    json_path = report_dir / REPORT_JSON
    markdown_path = report_dir / REPORT_MARKDOWN
    html_path = report_dir / REPORT_HTML
    atomic_write_utf8(json_path, json_data)
    atomic_write_text(markdown_path, markdown)
    atomic_write_text(html_path, html)
    return ReportFiles(json_path, markdown_path, markdown, html_path)
