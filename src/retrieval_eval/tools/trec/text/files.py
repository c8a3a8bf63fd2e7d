"""Read TREC qrels (``qid iter docid rel``) and runs (``qid Q0 docid rank score tag``).

The result is columnar: per line a query index, the document id packed into
words, and the grade or score. Lines of one query normally sit together, so
query ids are compared with the previous line and looked up once per stretch;
where they change on almost every line (runs concatenated from shards) every
line is looked up, and a run is regrouped by query as it is read.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from itertools import pairwise
from pathlib import Path

import numpy as np

from retrieval_eval.errors import InputError
from retrieval_eval.tools.trec.text.decimal import parse_short_decimals, parse_uniform_decimals
from retrieval_eval.tools.trec.text.tokens import Block, read_blocks
from retrieval_eval.tools.trec.text.values import (
    FloatArray,
    IntArray,
    PackedIds,
    WordArray,
    load_words,
    parse_floats,
    parse_grades,
    unaligned_words,
    widen,
    words_for,
)

RUN_LAYOUT = "qid Q0 docid rank score tag"
QRELS_LAYOUT = "qid iter docid rel"
BEIR_QRELS_HEADER = (b"query-id", b"corpus-id", b"score")


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
    """One row per data line. ``query`` indexes ``query_ids``; ``value`` is a grade or a score.

    Query of each row: when every query's lines form one stretch of the file (the usual
    layout) it is kept per stretch (``segment_starts``/``segment_codes``, a few bytes per
    query); when lines of queries are scattered (runs concatenated from shards) it is
    kept per line in ``line_query`` (4 bytes a line) and rows stay in file order.
    """

    path: Path
    query_ids: Sequence[str]  # PackedIds for files read here: decoded when read
    segment_starts: IntArray  # first row of each run of lines with one query id
    segment_codes: IntArray  # that run's index into query_ids
    doc_words: WordArray
    value: FloatArray | IntArray
    lines: LineMap
    runid: str = ""  # a run's tag on its last line (trec_eval prints that one)
    line_query: np.ndarray | None = None  # int32 query index per row, for scattered lines
    query_words: WordArray | None = None  # packed id of each query index
    file_query: np.ndarray | None = None  # per-line query index in file order, once regrouped
    regrouped: bool = False  # rows brought together from scattered lines (see file_query)

    def line_of(self, row: int) -> int:
        """1-based file line of a row."""
        return self.lines.line(self.file_row(row))

    def file_row(self, row: int) -> int:
        """Row in file order: a regrouped query keeps its lines in file order."""
        if self.file_query is None:
            return row
        query = int(np.searchsorted(self.segment_starts, row, side="right")) - 1
        rows_of_query = np.flatnonzero(self.file_query == self.segment_codes[query])
        return int(rows_of_query[row - int(self.segment_starts[query])])

    @property
    def rows(self) -> int:
        return int(self.doc_words.shape[0])

    @property
    def contiguous(self) -> bool:
        """True when each query's lines form one unbroken stretch of the file."""
        return self.line_query is None

    def query_rows(self, start: int = 0, stop: int | None = None) -> IntArray:
        """Query index of each row in ``start:stop``."""
        stop = self.rows if stop is None else min(stop, self.rows)
        if self.line_query is not None:
            return self.line_query[start:stop].astype(np.int64)
        first, last = np.searchsorted(self.segment_starts, [start, stop], side="right")
        bounds = np.append(self.segment_starts[first - 1 : last], stop)
        bounds[0] = start
        return np.repeat(self.segment_codes[first - 1 : last], np.diff(bounds))

    def query_of(self, rows: IntArray) -> IntArray:
        if self.line_query is not None:
            return self.line_query[rows].astype(np.int64)
        segment = np.searchsorted(self.segment_starts, rows, side="right") - 1
        return self.segment_codes[segment]

    def rows_per_query(self) -> IntArray:
        if self.line_query is not None:
            return np.bincount(self.line_query, minlength=len(self.query_ids)).astype(np.int64)
        lengths = np.diff(np.append(self.segment_starts, self.rows))
        counts = np.bincount(self.segment_codes, weights=lengths, minlength=len(self.query_ids))
        return counts.astype(np.int64)


def read_run(path: Path) -> Columns:
    """Parse a run file; extra fields after the tag are ignored, as trec_eval does.

    A run whose queries' lines are scattered comes back regrouped by query (see
    :func:`grouped_by_query`); the scattered copy is freed while reading.
    """
    return _read(path, fields=6, extra_ok=True, layout=RUN_LAYOUT, value_column=4, group=True)


def read_ranked_run(path: Path) -> Columns:
    """A run as the ``run-file`` retriever reads it: exactly six fields on every line, the
    rank an integer (checked, not used), and document ids kept whole (never hashed, as
    :func:`words_for` does past 128 bytes), since they are looked up in the corpus."""
    return _read(
        path,
        fields=6,
        extra_ok=False,
        layout=RUN_LAYOUT,
        value_column=4,
        group=True,
        strict=True,
    )


def read_qrels(path: Path) -> Columns:
    """Parse a qrels file: TREC's four columns, or BEIR's three under their header line
    (``query-id corpus-id score``, as BEIR's ``qrels/*.tsv`` files start)."""
    return _read(path, fields=4, extra_ok=False, layout=QRELS_LAYOUT, value_column=3, group=False)


def _read(
    path: Path,
    *,
    fields: int,
    extra_ok: bool,
    layout: str,
    value_column: int,
    group: bool,
    strict: bool = False,
) -> Columns:
    if not path.exists():  # a pipe (process substitution, /dev/stdin) is read as a file
        raise InputError("file not found", file=path)
    if path.is_dir():
        raise InputError("is a directory, not a file", file=path)
    doc_parts: list[WordArray] = []
    value_parts: list[np.ndarray] = []
    query_parts: list[_BlockQueries] = []
    names = _QueryIds()
    first_rows: list[int] = []
    first_lines: list[int] = []
    explicit: list[IntArray | None] = []
    rows = 0
    runid = b""
    previous_qid: WordArray | None = None
    last_code = -1
    header = () if value_column == 4 else BEIR_QRELS_HEADER
    for block in read_blocks(
        path, fields, extra_fields_allowed=extra_ok, layout=layout, header=header
    ):
        if block.lines == 0:
            continue
        doc_column = 1 if block.ends.shape[1] == len(BEIR_QRELS_HEADER) else 2
        query_words = words_for(block.buffer, *block.span(0), capped=False)
        if query_parts and query_parts[-1].starts is None:
            # The last block's queries changed almost every line: look up every line.
            part = _BlockQueries(rows, block.lines, None, names.codes(query_words).astype(np.int32))
        else:
            starts = _segment_starts(query_words, previous_qid)
            codes = names.codes(query_words[starts])
            part = _BlockQueries.of(rows, block.lines, starts, codes, last_code)
        query_parts.append(part)
        previous_qid = query_words[-1]
        last_code = part.last_code()
        doc_parts.append(words_for(block.buffer, *block.span(doc_column), capped=not strict))
        if strict:
            _check_integers(block, 3, path, "rank")
        if value_column == 4:
            value_parts.append(_scores(block, path))
            tag_starts, tag_ends = block.span(5)
            runid = block.buffer[int(tag_starts[-1]) : int(tag_ends[-1])].tobytes()
        else:
            value_parts.append(_grades(block, doc_column + 1, path))
        first_rows.append(rows)
        first_lines.append(int(block.line_numbers[0]))
        explicit.append(None if block.starts is None else block.line_numbers)
        rows += block.lines
    if rows == 0:
        if strict:  # a run that answers no query: every query is missing from it
            return _no_rows(path)
        raise InputError(f"no data lines; expected lines of the form '{layout}'", file=path)
    segment_starts, segment_codes, line_query = _query_layout(query_parts, names.count)
    del query_parts
    file_query = None
    if group and line_query is not None:
        segment_starts, doc_words, value = _grouped(
            line_query, names.count, first_rows, doc_parts, value_parts
        )
        segment_codes = np.arange(names.count, dtype=np.int64)
        file_query, line_query = line_query, None
    else:
        doc_words = _stack(doc_parts)
        value = np.concatenate(value_parts)
    del doc_parts, value_parts
    return Columns(
        path=path,
        query_ids=PackedIds(names.words()),
        segment_starts=segment_starts,
        segment_codes=segment_codes,
        doc_words=doc_words,
        value=value,
        lines=LineMap(tuple(first_rows), tuple(first_lines), tuple(explicit)),
        runid=runid.decode("utf-8", "replace"),
        line_query=line_query,
        query_words=names.words(),
        file_query=file_query,
        regrouped=file_query is not None,
    )


def _no_rows(path: Path) -> Columns:
    empty = np.zeros(0, dtype=np.int64)
    return Columns(
        path=path,
        query_ids=(),
        segment_starts=empty,
        segment_codes=empty,
        doc_words=np.zeros((0, 1), dtype=np.uint64),
        value=np.zeros(0, dtype=np.float64),
        lines=LineMap((0,), (1,), (None,)),
    )


@dataclass(frozen=True)
class _BlockQueries:
    """One block's query per row: per stretch of equal ids, or per line when they change often.

    A block whose first line continues the previous block's query has no stretch
    starting at its first row; ``lead_code`` is that query.
    """

    first_row: int
    rows: int
    starts: IntArray | None  # stretch starts (file rows); None when ``codes`` is per line
    codes: np.ndarray
    lead_code: int = -1

    def last_code(self) -> int:
        return int(self.codes[-1]) if self.codes.size else self.lead_code

    @classmethod
    def of(
        cls, first_row: int, rows: int, starts: IntArray, codes: IntArray, lead_code: int
    ) -> _BlockQueries:
        if 4 * starts.size > rows:  # scattered: a per-line int32 is smaller than the stretches
            return cls(first_row, rows, None, _expand(rows, starts, codes, lead_code), lead_code)
        return cls(first_row, rows, starts + first_row, codes, lead_code)

    def per_line(self) -> np.ndarray:
        if self.starts is None:
            return self.codes
        return _expand(self.rows, self.starts - self.first_row, self.codes, self.lead_code)


def _expand(rows: int, starts: IntArray, codes: IntArray, lead_code: int) -> np.ndarray:
    """int32 code per row from stretches starting at ``starts`` (block-relative)."""
    out = np.empty(rows, dtype=np.int32)
    first = int(starts[0]) if starts.size else rows
    out[:first] = lead_code
    lengths = np.diff(np.append(starts, rows))
    out[first:] = np.repeat(codes.astype(np.int32), lengths)
    return out


def _query_layout(
    parts: list[_BlockQueries], num_queries: int
) -> tuple[IntArray, IntArray, np.ndarray | None]:
    """(segment starts, segment codes, per-line codes): stretches if each query has one."""
    empty = np.zeros(0, dtype=np.int64)
    if all(part.starts is not None for part in parts):
        starts = np.concatenate([part.starts for part in parts if part.starts is not None])
        if starts.size == num_queries:
            return starts, np.concatenate([part.codes for part in parts]), None
    if num_queries > np.iinfo(np.int32).max:  # pragma: no cover - two billion query ids
        raise InputError("more than 2**31 distinct query ids")
    return empty, empty, np.concatenate([part.per_line() for part in parts])


class _QueryIds:
    """Query ids in order of first appearance, found through a hash table held in numpy.

    A scattered file starts a new stretch of lines on nearly every line, and every block
    holds most of the file's queries; so ids are looked up all at once (open addressing
    with linear probing, vectorised over the block), and only ids never seen before are
    decoded in Python. An id of up to 8 bytes is its own key (its packed word); a longer
    one is keyed by a 64-bit hash of its words, and a found id is confirmed on its exact
    bytes: a hash collision between two ids makes the table rebuild with another seed.
    """

    def __init__(self) -> None:
        self.count = 0  # distinct ids so far; their text is decoded only when read
        self._words = np.zeros((64, 1), dtype=np.uint64)  # packed id per code (spare rows)
        self._hashes = np.zeros(64, dtype=np.uint64)  # hash per code
        self._seed = 0
        self._bits = 7
        self._slots = np.full(1 << self._bits, -1, dtype=np.int32)  # code per slot, -1 empty

    def words(self) -> WordArray:
        return self._words[: self.count]

    def codes(self, query_words: WordArray) -> IntArray:
        width = max(self._words.shape[1], query_words.shape[1])
        if width > self._words.shape[1]:  # a longer id: hashes cover every word, so redo them
            self._words = widen(self._words, width)
            self._rebuild(self._bits)
        words = widen(query_words, width)
        while True:
            keys = self._hash(words)
            codes = self._find(keys)
            missing = np.flatnonzero(codes < 0)
            if missing.size:
                codes[missing] = self._add(words[missing], keys[missing])
            if width == 1 or bool((self._words[codes] == words).all()):
                return codes
            self._seed += 1  # pragma: no cover - two ids with one 64-bit hash
            self._rebuild(self._bits)  # pragma: no cover

    def _hash(self, words: WordArray) -> np.ndarray:
        if words.shape[1] == 1:
            return words[:, 0]  # exact: equal keys are equal ids
        value = np.full(words.shape[0], _MIX[0] + np.uint64(self._seed), dtype=np.uint64)
        for column in range(words.shape[1]):
            mixed = (words[:, column] ^ value) * _MIX[(column % 3) + 1]
            value = mixed ^ (mixed >> np.uint64(29))
        return value * _MIX[3]

    def _slot(self, keys: np.ndarray) -> IntArray:
        mixed = keys * _MIX[1]  # the product's top bits depend on every bit of the key
        return (mixed >> np.uint64(64 - self._bits)).astype(np.int64)

    def _find(self, keys: np.ndarray) -> IntArray:
        """Code of each key, or -1 where the key is not in the table."""
        slot = self._slot(keys)
        code = self._slots[slot]
        # Each code's hash, looked up by code: that table is a quarter the size of one by
        # slot and so stays in cache (-1, an empty slot, reads its last row and is masked).
        hit = self._hashes[code] == keys
        hit &= code >= 0
        found = np.where(hit, code, -1).astype(np.int64)
        # Most keys sit in their first slot; the rest probe on (-1 codes never match).
        pending = np.flatnonzero(~hit & (code >= 0))
        mask = (1 << self._bits) - 1
        slot = (slot[pending] + 1) & mask
        while pending.size:
            code = self._slots[slot]
            hit = self._hashes[code] == keys[pending]
            hit &= code >= 0
            found[pending[hit]] = code[hit]
            go_on = (code >= 0) & ~hit
            pending, slot = pending[go_on], (slot[go_on] + 1) & mask
        return found

    def _add(self, words: WordArray, keys: np.ndarray) -> IntArray:
        """Number the distinct new ids in order of appearance; the code of each row."""
        distinct, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
        by_appearance = np.argsort(first, kind="stable")
        new_codes = np.empty(distinct.size, dtype=np.int64)
        base = self.count
        new_codes[by_appearance] = np.arange(base, base + distinct.size)
        picked = first[by_appearance]
        total = base + distinct.size
        if total > self._hashes.size:
            capacity = max(2 * self._hashes.size, total)
            grown = np.zeros((capacity, self._words.shape[1]), dtype=np.uint64)
            grown[:base] = self._words[:base]
            self._words = grown
            self._hashes = np.resize(self._hashes, capacity)
        self._words[base:total] = words[picked]
        self._hashes[base:total] = keys[picked]
        self.count = total
        if 2 * total > self._slots.size:
            self._rebuild(max(self._bits, (4 * total).bit_length()))
        else:
            self._insert(np.arange(base, total, dtype=np.int64))
        return new_codes[inverse.reshape(-1)]

    def _rebuild(self, bits: int) -> None:
        count = self.count
        self._hashes[:count] = self._hash(self._words[:count])
        self._bits = bits
        self._slots = np.full(1 << bits, -1, dtype=np.int32)
        self._insert(np.arange(count, dtype=np.int64))

    def _insert(self, codes: IntArray) -> None:
        """Place codes whose hashes are all distinct from each other and from the table's."""
        slot = self._slot(self._hashes[codes])
        mask = (1 << self._bits) - 1
        while codes.size:
            free = self._slots[slot] < 0
            self._slots[slot[free]] = codes[free]  # of equal slots, one write wins
            placed = np.zeros(codes.size, dtype=bool)
            placed[free] = self._slots[slot[free]] == codes[free]
            codes, slot = codes[~placed], (slot[~placed] + 1) & mask


_MIX = (
    np.uint64(0x9E3779B97F4A7C15),
    np.uint64(0xC2B2AE3D27D4EB4F),
    np.uint64(0x165667B19E3779F9),
    np.uint64(0xD6E8FEB86659FD93),
)


def grouped_by_query(columns: Columns) -> Columns:
    """The same rows with each query's lines brought together (file order kept within a query).

    Runs concatenated from shards interleave their queries; every later step works
    query by query on contiguous stretches, in cache. ``order`` keeps each row's file
    row so errors still name the right line.
    """
    if columns.line_query is None:
        return columns
    starts, docs, values = _grouped(
        columns.line_query,
        len(columns.query_ids),
        [0],
        [columns.doc_words],
        [np.asarray(columns.value)],
    )
    return Columns(
        path=columns.path,
        query_ids=columns.query_ids,
        segment_starts=starts,
        segment_codes=np.arange(len(columns.query_ids), dtype=np.int64),
        doc_words=docs,
        value=values,
        lines=columns.lines,
        runid=columns.runid,
        query_words=columns.query_words,
        file_query=columns.line_query,
        regrouped=True,
    )


def _grouped(
    line_query: np.ndarray,
    num_queries: int,
    first_rows: list[int],
    doc_parts: list[WordArray],
    value_parts: list[np.ndarray],
) -> tuple[IntArray, WordArray, np.ndarray]:
    """(query starts, ids, values) with each query's lines together, in file order.

    Query q's lines go after all lines of queries below q (every index occurs). Each
    block's lines are written straight to their places (see :func:`_places`), so no
    sort or gather runs over the whole file and the parts are never concatenated
    first. The parts lists are emptied as they are used.
    """
    rows = line_query.size
    starts = np.zeros(num_queries, dtype=np.int64)
    np.cumsum(np.bincount(line_query, minlength=num_queries)[:-1], out=starts[1:])
    cursor = starts.copy()  # next free row of each query
    width = max(part.shape[1] for part in doc_parts)
    docs = np.empty((rows, width), dtype=np.uint64)
    values = np.empty(rows, dtype=value_parts[0].dtype)
    for index, first in enumerate(first_rows):
        part_docs, part_values = widen(doc_parts[index], width), value_parts[index]
        doc_parts[index], value_parts[index] = part_docs[:0], part_values[:0]  # free as we go
        at = _places(line_query[first : first + part_values.size], cursor)
        if width == 1:  # a 1-D scatter is several times cheaper than a row-wise one
            docs.reshape(-1)[at] = part_docs.reshape(-1)
        else:
            docs[at] = part_docs
        values[at] = part_values
    return starts, docs, values


def _places(codes: np.ndarray, cursor: IntArray) -> IntArray:
    """Grouped row of each line of a block: its query's next free rows, in file order.

    ``cursor`` (next free row per query) advances past the block. The block's lines
    are put in query order by a stable radix sort (numpy's for 16-bit keys): one pass
    on the codes, or two, low half then high half, above 65,536 queries.
    """
    size = codes.size
    if cursor.size <= 1 << 16:
        order = np.argsort(codes.astype(np.uint16), kind="stable")
    else:
        order = np.argsort((codes & 0xFFFF).astype(np.uint16), kind="stable")
        high = (codes[order] >> 16).astype(np.uint16)
        order = order[np.argsort(high, kind="stable")]
    query = codes[order].astype(np.int64)
    new_query = np.ones(size, dtype=bool)
    new_query[1:] = query[1:] != query[:-1]
    run_starts = np.flatnonzero(new_query)
    taken = np.arange(size, dtype=np.int64) - run_starts[np.cumsum(new_query) - 1]
    at = np.empty(size, dtype=np.int64)
    at[order] = cursor[query] + taken
    cursor[query[run_starts]] += np.diff(np.append(run_starts, size))
    return at


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


_DIGITS = np.zeros(256, dtype=bool)
_DIGITS[ord("0") : ord("9") + 1] = True
_SIGNS = np.zeros(256, dtype=bool)
_SIGNS[[ord("+"), ord("-")]] = True


def _check_integers(block: Block, field: int, path: Path, what: str) -> None:
    """Every token of ``field`` is an optionally signed run of ASCII digits."""
    starts, ends = block.span(field)
    buffer = block.buffer
    signed = _SIGNS[buffer[starts]] & (ends - starts > 1)
    first = starts + signed
    other = np.zeros(buffer.size + 1, dtype=np.int64)
    np.cumsum(~_DIGITS[buffer], out=other[1:])
    bad = (other[ends] - other[first]) > 0
    if bool(bad.any()):
        row = int(np.flatnonzero(bad)[0])
        text = buffer[int(starts[row]) : int(ends[row])].tobytes().decode("utf-8", "replace")
        raise InputError(
            f"{what} {text!r} is not an integer", file=path, line=int(block.line_numbers[row])
        )


def _grades(block: Block, field: int, path: Path) -> IntArray:
    starts, ends = block.span(field)
    if bool((ends - starts == 1).all()):  # the usual single digit: its byte is its value
        digit = block.buffer[starts] - np.uint8(ord("0"))
        if bool((digit <= 9).all()):
            return digit.astype(np.int64)
    words = words_for(block.buffer, starts, ends, capped=False)
    return parse_grades(words, block.line_numbers, path, "relevance")


def _scores(block: Block, path: Path) -> FloatArray:
    starts, ends = block.span(4)
    lengths = ends - starts
    length = int(lengths[0])
    if bool((lengths == length).all()):  # usually every score has one layout
        uniform = parse_uniform_decimals(unaligned_words(block.buffer)[starts], length)
        if uniform is not None:
            return uniform
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


PIECE_ROWS = 1 << 20  # lines per streamed piece: about 40 MB of parsed columns


class NotContiguousError(Exception):
    """A query's lines are not in one stretch of the file: it cannot be read in pieces."""


def stream_run(path: Path, piece_rows: int = PIECE_ROWS) -> Iterator[Columns]:
    """A run, as :func:`read_run` parses it, in pieces of whole queries of ``piece_rows``
    lines or more (a piece ends where a query ends; the last one holds the rest).

    Only for a run whose every query's lines form one stretch: a query id seen
    before in an earlier stretch raises :class:`NotContiguousError` (the caller then
    reads the whole file). Each piece numbers its own queries from 0; row line
    numbers are kept only per piece, so errors are for the whole-file reader to word.
    Memory is one piece and the lines of the query that straddles the cut.
    """
    if not path.exists() or path.is_dir():
        raise NotContiguousError  # let the whole-file reader name the problem
    names = _QueryIds()
    previous_qid: WordArray | None = None
    pending_docs: list[WordArray] = []
    pending_values: list[FloatArray] = []
    pending_starts: list[IntArray] = []  # stretch starts, rows relative to the pending lines
    pending_rows = 0
    first_code = 0  # code of the query on the first pending line
    runid = b""
    for block in read_blocks(path, 6, extra_fields_allowed=True, layout=RUN_LAYOUT):
        if block.lines == 0:
            continue
        query_words = words_for(block.buffer, *block.span(0), capped=False)
        starts = _segment_starts(query_words, previous_qid)
        known = names.count
        codes = names.codes(query_words[starts])
        if not np.array_equal(codes, np.arange(known, known + starts.size)):
            raise NotContiguousError
        previous_qid = query_words[-1]
        pending_docs.append(words_for(block.buffer, *block.span(2), capped=True))
        pending_values.append(_scores(block, path))
        pending_starts.append(starts + pending_rows)
        tag_starts, tag_ends = block.span(5)
        runid = block.buffer[int(tag_starts[-1]) : int(tag_ends[-1])].tobytes()
        pending_rows += block.lines
        if pending_rows < piece_rows:
            continue
        all_starts = np.concatenate(pending_starts)
        cut = int(all_starts[-1]) if all_starts.size else 0
        if cut == 0:  # one query so far: it is not finished yet
            continue
        docs, values = _stack(pending_docs), np.concatenate(pending_values)
        last_code = names.count - 1
        yield _piece(path, names, first_code, last_code, all_starts[:-1], docs[:cut], values[:cut])
        pending_docs, pending_values = [docs[cut:]], [values[cut:]]
        pending_starts = [all_starts[-1:] - cut]
        pending_rows -= cut
        first_code = last_code
    if pending_rows:
        all_starts = np.concatenate(pending_starts)
        docs, values = _stack(pending_docs), np.concatenate(pending_values)
        piece = _piece(path, names, first_code, names.count, all_starts, docs, values)
        yield replace(piece, runid=runid.decode("utf-8", "replace"))
    elif not names.count:
        raise NotContiguousError  # no data lines: the whole-file reader says so


def _piece(
    path: Path,
    names: _QueryIds,
    first_code: int,
    stop_code: int,
    starts: IntArray,
    docs: WordArray,
    values: FloatArray,
) -> Columns:
    """Columns of the pending lines' queries ``first_code:stop_code``, numbered from 0.

    A piece's first line may continue a query whose stretch began in the previous
    piece; ``starts`` then lacks row 0, which is added here.
    """
    if starts.size == 0 or int(starts[0]) != 0:
        starts = np.concatenate([np.zeros(1, dtype=np.int64), starts])
    words = names.words()[first_code:stop_code].copy()
    return Columns(
        path=path,
        query_ids=PackedIds(words),
        segment_starts=starts.astype(np.int64),
        segment_codes=np.arange(starts.size, dtype=np.int64),
        doc_words=docs,
        value=values,
        lines=LineMap((0,), (1,), (None,)),
        query_words=words,
    )


BUCKET_QUERIES = 1 << 10  # queries a bucket of a scattered run holds at first
MAX_BUCKETS = 128  # past this many, buckets double their queries
BATCH_ROWS = 1 << 16  # lines of a scattered run looked up and split into buckets at a time


def bucketed_run(
    path: Path, piece_rows: int = PIECE_ROWS, bucket_queries: int = BUCKET_QUERIES
) -> Iterator[Columns]:
    """A run whose queries' lines are scattered, as pieces of whole queries regrouped by query.

    Queries are numbered in order of first appearance and split into buckets of
    consecutive numbers (see :class:`_Buckets`); each block's lines go to their buckets
    as the block is read. Once the file is read, consecutive buckets make a piece of at
    least ``piece_rows`` lines (the last holds the rest), each bucket's lines grouped by
    query (file order kept within a query, as :func:`read_run` does); a piece numbers
    its own queries from 0. No step after the read works on the whole file, and a
    bucket's regrouping gathers from a few MB that stay in cache. Memory is the parsed
    lines (18 bytes a line for short ids) plus one piece, against the whole-file
    reader's parsed lines, their per-line query index and their regrouped copy. Row
    line numbers are not kept: errors are for the whole-file reader to word.
    """
    if not 1 <= bucket_queries <= 1 << 16:
        raise ValueError("bucket_queries must lie within 1..65536 (16-bit query offsets)")
    if not path.exists() or path.is_dir():
        raise InputError("not a readable file", file=path)  # the whole-file reader words it
    names = _QueryIds()
    buckets = _Buckets(bucket_queries)
    batch: list[tuple[WordArray, WordArray, FloatArray]] = []  # (query ids, ids, scores)
    batch_rows = 0
    runid = b""
    for block in read_blocks(path, 6, extra_fields_allowed=True, layout=RUN_LAYOUT):
        if block.lines == 0:
            continue
        query_words = words_for(block.buffer, *block.span(0), capped=False)
        docs = words_for(block.buffer, *block.span(2), capped=True)
        batch.append((query_words, docs, _scores(block, path)))
        batch_rows += block.lines
        tag_starts, tag_ends = block.span(5)
        runid = block.buffer[int(tag_starts[-1]) : int(tag_ends[-1])].tobytes()
        if batch_rows >= BATCH_ROWS:
            _add_batch(names, buckets, batch)
            batch, batch_rows = [], 0
    _add_batch(names, buckets, batch)
    if not names.count:
        raise InputError("no data lines", file=path)  # the whole-file reader words it
    words = names.words()
    for first, stop, starts, docs, values in buckets.pieces(names.count, piece_rows):
        ids = words[first:stop].copy()
        yield Columns(
            path=path,
            query_ids=PackedIds(ids),
            segment_starts=starts,
            segment_codes=np.arange(stop - first, dtype=np.int64),
            doc_words=docs,
            value=values,
            lines=LineMap((0,), (1,), (None,)),
            runid=runid.decode("utf-8", "replace"),
            query_words=ids,
            regrouped=True,
        )


def _add_batch(
    names: _QueryIds, buckets: _Buckets, batch: list[tuple[WordArray, WordArray, FloatArray]]
) -> None:
    """Number a batch's query ids and split its lines into buckets: a few blocks at a time,
    so the per-call overhead of the lookups and the split does not grow with the blocks."""
    if not batch:
        return
    codes = names.codes(_stack([part[0] for part in batch]))
    docs = _stack([part[1] for part in batch])
    buckets.add(codes, names.count, docs, np.concatenate([part[2] for part in batch]))


_Part = tuple[WordArray, FloatArray, np.ndarray]  # ids, scores, query offsets in the bucket


class _Buckets:
    """A scattered run's lines split by query number as they are read.

    Bucket b holds queries ``b * width`` to ``(b + 1) * width - 1``; each line keeps its
    query's offset in its bucket (16 bits). ``width`` starts small, so a bucket's lines
    fit in cache when it is regrouped, and doubles whenever there would be more than
    MAX_BUCKETS (bucket j then takes the old buckets 2j and 2j + 1), so a block is never
    cut into more than that many parts.
    """

    def __init__(self, width: int) -> None:
        self.width = width
        self._parts: list[list[_Part]] = []  # per bucket, in file order per query

    def add(self, codes: IntArray, count: int, docs: WordArray, values: FloatArray) -> None:
        """A batch of lines; ``count`` is how many queries have been numbered so far."""
        while count > MAX_BUCKETS * self.width and self.width <= 1 << 15:
            self._double()
        while len(self._parts) * self.width < count:
            self._parts.append([])
        offsets = (codes % self.width).astype(np.uint16)
        if len(self._parts) == 1:
            self._parts[0].append((docs, values, offsets))
            return
        bucket = codes // self.width
        narrow = len(self._parts) <= 1 << 16  # numpy's stable sort of 16-bit keys: one radix pass
        order = np.argsort(bucket.astype(np.uint16) if narrow else bucket, kind="stable")
        docs, values, offsets = _take_rows(docs, order), values[order], offsets[order]
        bounds = np.zeros(len(self._parts) + 1, dtype=np.int64)
        np.cumsum(np.bincount(bucket, minlength=len(self._parts)), out=bounds[1:])
        for number, (low, high) in enumerate(pairwise(bounds.tolist())):
            if low < high:
                self._parts[number].append((docs[low:high], values[low:high], offsets[low:high]))

    def _double(self) -> None:
        merged: list[list[_Part]] = []
        for number in range(0, len(self._parts), 2):
            parts = self._parts[number]
            for upper in self._parts[number + 1 : number + 2]:
                for _, _, offsets in upper:
                    offsets += np.uint16(self.width)  # each line sits in one part only
                parts = parts + upper  # a query's lines are all in one of the two
            merged.append(parts)
        self._parts = merged
        self.width *= 2

    def pieces(
        self, count: int, piece_rows: int
    ) -> Iterator[tuple[int, int, IntArray, WordArray, FloatArray]]:
        """(first query, stop query, query starts, ids, scores) of each piece, in query order.

        A bucket's parts are freed as it is copied into its piece.
        """
        sizes = [sum(part[1].size for part in parts) for parts in self._parts]
        first_bucket = 0
        while first_bucket < len(sizes):
            stop_bucket, rows = first_bucket, 0
            while stop_bucket < len(sizes) and (rows < piece_rows or not rows):
                rows += sizes[stop_bucket]
                stop_bucket += 1
            first, stop = first_bucket * self.width, min(stop_bucket * self.width, count)
            words = max(
                part[0].shape[1]
                for b in range(first_bucket, stop_bucket)
                for part in self._parts[b]
            )
            docs = np.empty((rows, words), dtype=np.uint64)
            values = np.empty(rows, dtype=np.float64)
            per_query = np.zeros(stop - first, dtype=np.int64)
            row = 0
            for number in range(first_bucket, stop_bucket):
                parts, self._parts[number] = self._parts[number], []
                offsets = np.concatenate([part[2] for part in parts])
                order = np.argsort(offsets, kind="stable")  # one radix pass; file order kept
                base = number * self.width - first
                queries = min(self.width, count - number * self.width)
                per_query[base : base + queries] = np.bincount(offsets, minlength=queries)
                end = row + offsets.size
                bucket_docs = _stack([part[0] for part in parts])
                if words == 1:  # a 1-D gather is several times cheaper than a row-wise one
                    np.take(
                        bucket_docs.reshape(-1), order, out=docs[row:end].reshape(-1), mode="clip"
                    )
                else:
                    np.take(
                        widen(bucket_docs, words), order, axis=0, out=docs[row:end], mode="clip"
                    )
                bucket_values = np.concatenate([part[1] for part in parts])
                np.take(bucket_values, order, out=values[row:end], mode="clip")
                row = end
            starts = np.zeros(stop - first, dtype=np.int64)
            np.cumsum(per_query[:-1], out=starts[1:])
            yield first, stop, starts, docs, values
            first_bucket = stop_bucket


def _take_rows(words: WordArray, rows: IntArray) -> WordArray:
    if words.shape[1] == 1:  # a 1-D gather is several times cheaper than a row-wise one
        return np.ascontiguousarray(words).reshape(-1)[rows].reshape(-1, 1)
    return words[rows]
