"""Read TREC qrels (``qid iter docid rel``) and runs (``qid Q0 docid rank score tag``).

The result is columnar: per line a query index, the document id packed into
words, and the grade or score. Lines of one query normally sit together, so
query ids are compared with the previous line instead of being hashed one by one.
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from retrieval_eval.errors import InputError
from retrieval_eval.score.ranked import FloatArray, IntArray
from retrieval_eval.trec.decimal import parse_short_decimals
from retrieval_eval.trec.tokens import Block, read_blocks
from retrieval_eval.trec.values import (
    WordArray,
    as_bytes_strings,
    load_words,
    parse_floats,
    parse_ints,
    widen,
    words_for,
)

RUN_LAYOUT = "qid Q0 docid rank score tag"
QRELS_LAYOUT = "qid iter docid rel"


@dataclass(frozen=True)
class LineMap:
    """Row -> 1-based file line, kept per block: rows of a regular block are consecutive lines."""

    first_rows: tuple[int, ...]
    first_lines: tuple[int, ...]
    explicit: tuple[
        IntArray | None, ...
    ]  # per-row line numbers where blank/comment lines intervene

    def line(self, row: int) -> int:
        block = bisect_right(self.first_rows, row) - 1
        numbers = self.explicit[block]
        offset = row - self.first_rows[block]
        return self.first_lines[block] + offset if numbers is None else int(numbers[offset])


@dataclass(frozen=True)
class Columns:
    """One row per data line. ``query`` indexes ``query_ids``; ``value`` is a grade or a score."""

    path: Path
    query_ids: tuple[str, ...]
    segment_starts: IntArray  # first row of each run of lines with one query id
    segment_codes: IntArray  # that run's index into query_ids
    doc_words: WordArray
    value: FloatArray | IntArray
    lines: LineMap
    runid: str = ""  # a run's tag on its last line (trec_eval prints that one)
    order: IntArray | None = None  # file row of each row, once regrouped by query

    def line_of(self, row: int) -> int:
        """1-based file line of a row."""
        return self.lines.line(row if self.order is None else int(self.order[row]))

    @property
    def rows(self) -> int:
        return int(self.doc_words.shape[0])

    @property
    def contiguous(self) -> bool:
        """True when each query's lines form one unbroken stretch of the file."""
        return self.segment_starts.size == len(self.query_ids)

    def query_rows(self, start: int = 0, stop: int | None = None) -> IntArray:
        """Query index of each row in ``start:stop``, expanded from the segments."""
        stop = self.rows if stop is None else min(stop, self.rows)
        first, last = np.searchsorted(self.segment_starts, [start, stop], side="right")
        bounds = np.append(self.segment_starts[first - 1 : last], stop)
        bounds[0] = start
        return np.repeat(self.segment_codes[first - 1 : last], np.diff(bounds))

    def query_of(self, rows: IntArray) -> IntArray:
        segment = np.searchsorted(self.segment_starts, rows, side="right") - 1
        return self.segment_codes[segment]

    def rows_per_query(self) -> IntArray:
        lengths = np.diff(np.append(self.segment_starts, self.rows))
        counts = np.bincount(self.segment_codes, weights=lengths, minlength=len(self.query_ids))
        return counts.astype(np.int64)


def read_run(path: Path) -> Columns:
    """Parse a run file; extra fields after the tag are ignored, as trec_eval does.

    A run whose queries' lines are scattered comes back regrouped by query (see
    :func:`grouped_by_query`), so the scattered copy is freed before evaluation.
    """
    return grouped_by_query(_read(path, fields=6, extra_ok=True, layout=RUN_LAYOUT, value_column=4))


def read_qrels(path: Path) -> Columns:
    return _read(path, fields=4, extra_ok=False, layout=QRELS_LAYOUT, value_column=3)


def _read(path: Path, *, fields: int, extra_ok: bool, layout: str, value_column: int) -> Columns:
    if not path.is_file():
        raise InputError("file not found", file=path)
    doc_parts: list[WordArray] = []
    value_parts: list[np.ndarray] = []
    segment_starts: list[IntArray] = []
    segment_codes: list[IntArray] = []
    names = _QueryIds()
    first_rows: list[int] = []
    first_lines: list[int] = []
    explicit: list[IntArray | None] = []
    rows = 0
    runid = b""
    previous_qid: WordArray | None = None
    for block in read_blocks(path, fields, extra_fields_allowed=extra_ok, layout=layout):
        if block.lines == 0:
            continue
        query_words = words_for(block.buffer, *block.span(0), capped=False)
        starts = _segment_starts(query_words, previous_qid)
        previous_qid = query_words[-1]
        segment_starts.append(starts + rows)
        segment_codes.append(names.codes(query_words[starts]))
        doc_parts.append(words_for(block.buffer, *block.span(2)))
        if value_column == 4:
            value_parts.append(_scores(block, path))
            tag_starts, tag_ends = block.span(5)
            runid = block.buffer[int(tag_starts[-1]) : int(tag_ends[-1])].tobytes()
        else:
            grade_words = words_for(block.buffer, *block.span(3), capped=False)
            value_parts.append(parse_ints(grade_words, block.line_numbers, path, "relevance"))
        first_rows.append(rows)
        first_lines.append(int(block.line_numbers[0]))
        explicit.append(None if block.starts is None else block.line_numbers)
        rows += block.lines
    if rows == 0:
        raise InputError(f"no data lines; expected lines of the form '{layout}'", file=path)
    return Columns(
        path=path,
        query_ids=tuple(names.names),
        segment_starts=np.concatenate(segment_starts),
        segment_codes=np.concatenate(segment_codes),
        doc_words=_stack(doc_parts),
        value=np.concatenate(value_parts),
        lines=LineMap(tuple(first_rows), tuple(first_lines), tuple(explicit)),
        runid=runid.decode("utf-8", "replace"),
    )


class _QueryIds:
    """Query ids in order of first appearance, and a sorted index of their bytes.

    A shuffled file starts a new stretch of lines on nearly every line, and every
    block holds most of the file's queries; so ids are looked up in numpy (a sorted
    array and a binary search), and only ids never seen before are decoded in Python.
    """

    def __init__(self) -> None:
        self.names: list[str] = []
        self._sorted = np.zeros(0, dtype="S1")
        self._codes = np.zeros(0, dtype=np.int64)

    def codes(self, query_words: WordArray) -> IntArray:
        if query_words.shape[1] == 1:  # one word: unique on integers, cheaper than on bytes
            words, first, inverse = np.unique(
                query_words[:, 0], return_index=True, return_inverse=True
            )
            distinct = as_bytes_strings(words[:, None])
        else:
            strings = as_bytes_strings(query_words)
            distinct, first, inverse = np.unique(strings, return_index=True, return_inverse=True)
        codes = np.empty(distinct.size, dtype=np.int64)
        found = np.zeros(distinct.size, dtype=bool)
        if self._sorted.size:
            at = np.minimum(np.searchsorted(self._sorted, distinct), self._sorted.size - 1)
            found = self._sorted[at] == distinct
            codes[found] = self._codes[at[found]]
        new = np.flatnonzero(~found)
        if new.size:
            new = new[np.argsort(first[new], kind="stable")]  # numbered as they appear
            codes[new] = np.arange(len(self.names), len(self.names) + new.size)
            self.names.extend(raw.decode("utf-8", "replace") for raw in distinct[new].tolist())
            width = max(self._sorted.dtype.itemsize, distinct.dtype.itemsize)
            merged = np.concatenate([self._sorted.astype(f"S{width}"), distinct[new]])
            order = np.argsort(merged, kind="stable")
            self._sorted = merged[order]
            self._codes = np.concatenate([self._codes, codes[new]])[order]
        return codes[inverse]


def grouped_by_query(columns: Columns) -> Columns:
    """The same rows with each query's lines brought together (file order kept within a query).

    Runs concatenated from shards interleave their queries; every later step works
    query by query on contiguous stretches. ``order`` remembers each row's file row
    so errors still name the right line.
    """
    if columns.contiguous:
        return columns
    rows = columns.rows
    codes = columns.query_rows()
    if rows < 1 << 32 and len(columns.query_ids) < 1 << 31:
        # One sort of (query, row) packed in a word: cheaper than a stable argsort.
        keys = codes.astype(np.uint64)
        del codes
        keys <<= np.uint64(32)
        keys |= np.arange(rows, dtype=np.uint64)
        keys.sort()
        high = keys >> np.uint64(32)
        changed = np.flatnonzero(high[1:] != high[:-1]) + 1
        starts = np.concatenate([np.zeros(1, dtype=np.int64), changed.astype(np.int64)])
        segment_codes = high[starts].astype(np.int64)
        del high
        keys &= np.uint64(0xFFFFFFFF)
        order = keys.view(np.int64)
    else:  # pragma: no cover - over 4 billion lines
        order = np.argsort(codes, kind="stable")
        sorted_codes = codes[order]
        starts = np.flatnonzero(np.diff(sorted_codes, prepend=-1)).astype(np.int64)
        segment_codes = sorted_codes[starts]
    return Columns(
        path=columns.path,
        query_ids=columns.query_ids,
        segment_starts=starts,
        segment_codes=segment_codes,
        doc_words=columns.doc_words[order],
        value=columns.value[order],
        lines=columns.lines,
        runid=columns.runid,
        order=order,
    )


def _stack(parts: list[WordArray]) -> WordArray:
    width = max(part.shape[1] for part in parts)
    return np.concatenate([widen(part, width) for part in parts])


def _segment_starts(words: WordArray, previous: WordArray | None) -> IntArray:
    """Rows whose query id differs from the row before (the previous block's last row first)."""
    changed = np.ones(words.shape[0], dtype=bool)
    changed[1:] = words[1:, 0] != words[:-1, 0]
    for column in range(1, words.shape[1]):
        changed[1:] |= words[1:, column] != words[:-1, column]
    if previous is not None:
        width = max(previous.size, words.shape[1])
        first = widen(words[:1], width)[0]
        changed[0] = not bool((widen(previous[None, :], width)[0] == first).all())
    return np.flatnonzero(changed).astype(np.int64)


def _scores(block: Block, path: Path) -> FloatArray:
    starts, ends = block.span(4)
    lengths = ends - starts
    first_word = load_words(block.buffer, starts, np.minimum(lengths, 8), 1)[:, 0]
    values, handled = parse_short_decimals(first_word, lengths)
    if bool(handled.all()):
        return values  # the fast decoder never yields NaN
    rows = np.flatnonzero(~handled)
    slow = words_for(block.buffer, starts[rows], ends[rows], capped=False)
    values[rows] = parse_floats(slow, lengths[rows], block.line_numbers[rows], path, "score")
    if bool(np.isnan(values).any()):
        row = int(np.flatnonzero(np.isnan(values))[0])
        raise InputError(
            "score is NaN; scores must be numbers", file=path, line=int(block.line_numbers[row])
        )
    return values
