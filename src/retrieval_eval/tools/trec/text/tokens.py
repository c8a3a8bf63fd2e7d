"""Whitespace-separated TREC text to token spans, in numpy, without a Python loop per line.

A run of 100,000 queries x 100 results is 10 million lines; splitting them in
Python alone costs more than trec_eval's whole evaluation. The file is read in
blocks of whole lines; each block is tokenised by locating its whitespace bytes
with vectorised comparisons. The common layout (one separator between fields,
``\\n`` endings, no blank or comment lines) is recognised in a single pass;
anything else goes through a general path that handles runs of spaces, tabs,
``\\r\\n``, blank lines and ``#`` comments, as trec_eval does.

Beyond trec_eval, which reads bytes as they are: a UTF-8 byte-order mark at the start
of the file is skipped (Windows editors write one, and it would otherwise become part
of the first query id, silently splitting that query in two), and a lone ``\\r`` ends
a line as ``\\n`` does (classic Mac line endings; Python's universal newlines, and so
pytrec_eval's and ranx's readers, split there too). A file in UTF-16 or UTF-32 (what
PowerShell's ``>`` writes) is refused with a message saying so. A gzipped file (``run.gz``,
as ranx and ir_measures read it) is decompressed as it is read, within the bounds every
input has (``load/input_files.py``: how far it may inflate, and ``MAX_TREC_LINES``), and a
pipe (``<(zcat run.gz)``, ``/dev/stdin``) is read like a file.
"""

from __future__ import annotations

import io
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from retrieval_eval.errors import InputError
from retrieval_eval.load.input_files import (
    MAX_TREC_LINES,
    UTF8_BOM,
    bounded_gzip,
    too_many_lines,
    wide_encoding_problem,
)
from retrieval_eval.tools.trec.text.values import IntArray

# 512 KiB of text per block: its temporaries stay in a core's cache (2 MiB of L2 here, where
# 512 KiB measured about 4% faster than 1 MiB on a 337 MB run) and malloc reuses them.
BLOCK_BYTES = 1 << 19
PAD = 16  # zero bytes after each block so 8-byte word loads never run off the end
_NEWLINE, _RETURN, _HASH = 10, 13, 35
_GZIP_MAGIC = b"\x1f\x8b"
Bytes = np.ndarray  # uint8 array


@dataclass(frozen=True)
class Block:
    """Token spans of the data lines in one block of a file.

    ``buffer`` holds the block's bytes followed by at least PAD more; ``ends`` are
    (lines, fields) offsets just past each token; a token starts one byte after
    the previous field's end (or line's end) unless ``starts`` says otherwise
    (irregular whitespace); ``line_numbers`` are 1-based in the file.
    """

    buffer: Bytes
    ends: IntArray
    line_numbers: IntArray
    starts: IntArray | None = None

    @property
    def lines(self) -> int:
        return int(self.ends.shape[0])

    def span(self, field: int) -> tuple[IntArray, IntArray]:
        """(starts, ends) of one field on every line."""
        if self.starts is not None:
            return self.starts[:, field], self.ends[:, field]
        if field > 0:
            return self.ends[:, field - 1] + 1, self.ends[:, field]
        starts = np.empty(self.lines, dtype=np.int64)
        starts[:1] = 0
        starts[1:] = self.ends[:-1, -1] + 1
        return starts, self.ends[:, 0]


def read_blocks(
    path: Path,
    fields: int,
    *,
    extra_fields_allowed: bool,
    layout: str,
    header: tuple[bytes, ...] = (),
    max_lines: int = MAX_TREC_LINES,
) -> Iterator[Block]:
    """Yield the file's data lines block by block, each line with exactly ``fields`` tokens.

    The blocks share one buffer: a block is valid only until the next one is
    requested. ``layout`` (e.g. ``qid Q0 docid rank score tag``) feeds error messages.
    When the file's first line is ``header`` (its words, compared case-insensitively),
    that line is skipped and every other line must have ``len(header)`` fields: the
    header names the file's own layout (BEIR's ``query-id corpus-id score``), so the
    blocks then have that many columns.
    """
    buffer = np.zeros(BLOCK_BYTES + PAD, dtype=np.uint8)
    filled = 0  # bytes of an unfinished line carried over from the previous read
    first_line = 1
    sniffed = not header
    with open(path, "rb") as raw, _text_stream(raw, path) as handle:
        while True:
            if filled >= buffer.size - PAD:  # one line longer than the buffer: grow it
                buffer = np.concatenate([buffer, np.zeros(buffer.size, dtype=np.uint8)])
            capacity = buffer.size - PAD
            try:
                read = handle.readinto(memoryview(buffer)[filled:capacity])  # type: ignore[arg-type]
            except (OSError, EOFError, zlib.error) as error:  # a truncated or corrupt .gz
                raise InputError(
                    f"cannot read the file from here on: {error}", file=path, line=first_line
                ) from None
            end = filled + (read or 0)
            if not read:
                if end and bool((buffer[:end] > 32).any()):
                    buffer[end] = _NEWLINE  # a last line without its newline
                    block, _ = _tokenize(
                        buffer, end + 1, first_line, path, fields, extra_fields_allowed, layout
                    )
                    yield block
                return
            cut = _after_last_newline(buffer, end) or _after_last_lone_return(buffer, end)
            if cut == 0:
                filled = end
                continue
            if not sniffed:
                sniffed = True
                if _blank_header(buffer, cut, header):
                    fields = len(header)
                    layout = " ".join(word.decode() for word in header)
            block, newlines = _tokenize(
                buffer, cut, first_line, path, fields, extra_fields_allowed, layout
            )
            yield block
            first_line += newlines
            if first_line - 1 > max_lines:
                raise too_many_lines(path, max_lines)
            carry = buffer[cut:end].copy()
            buffer[: carry.size] = carry
            filled = carry.size


def _blank_header(buffer: Bytes, cut: int, header: tuple[bytes, ...]) -> bool:
    """Whether the first line is ``header``; if so it becomes a blank line (numbers kept)."""
    body = buffer[:cut]
    first_end = int(np.flatnonzero(_line_ends(body))[0])
    words = body[:first_end].tobytes().lower().split()
    if tuple(words) != tuple(word.lower() for word in header):
        return False
    buffer[:first_end] = 32
    return True


def _after_last_newline(buffer: Bytes, end: int) -> int:
    window = 1 << 16
    lower = max(0, end - window)
    while True:
        hits = np.flatnonzero(buffer[lower:end] == _NEWLINE)
        if hits.size:
            return lower + int(hits[-1]) + 1
        if lower == 0:
            return 0
        end, lower = lower, max(0, lower - window)


def _text_stream(handle: io.BufferedReader, path: Path) -> io.BufferedReader:
    """The file's text: decompressed when it is gzipped (runs are often shipped as
    ``run.gz``), after any UTF-8 byte-order mark; UTF-16 and UTF-32 are refused.

    Only ``peek`` looks ahead, so a pipe (``<(zcat run.gz)``, ``/dev/stdin``) reads too.
    """
    stream = handle
    if handle.peek(2)[:2] == _GZIP_MAGIC:
        # A small buffer: peeking at the first bytes must not inflate (and fail on) the
        # rest, which read_blocks reads in blocks and reports with the line it reached.
        stream = bounded_gzip(handle, path, buffer_size=8)
    try:
        head = stream.peek(4)[:4]
    except (OSError, EOFError, zlib.error) as error:
        raise InputError(f"cannot read the file: {error}", file=path, line=1) from None
    problem = wide_encoding_problem(head)
    if problem is not None:
        raise InputError(problem, file=path, line=1)
    if head.startswith(UTF8_BOM):
        stream.read(len(UTF8_BOM))
    return stream


def _after_last_lone_return(buffer: Bytes, end: int) -> int:
    """Offset after the last ``\\r`` that ends a line, for a buffer holding no ``\\n``.

    A ``\\r`` in the buffer's last byte may be the first half of a ``\\r\\n`` split by
    the read, so it is not a line end yet; any earlier one is (no ``\\n`` follows it).
    """
    hits = np.flatnonzero(buffer[: max(0, end - 1)] == _RETURN)
    return int(hits[-1]) + 1 if hits.size else 0


def _line_ends(body: Bytes) -> Bytes:
    """True at each ``\\n``, and at each ``\\r`` not followed by ``\\n`` (a lone one)."""
    ends: Bytes = np.equal(body, _NEWLINE)
    ends[:-1] |= (body[:-1] == _RETURN) & ~ends[1:]
    ends[-1:] |= body[-1:] == _RETURN  # a block cut after a lone one ends with it
    return ends


def _tokenize(
    buffer: Bytes, size: int, first_line: int, path: Path, fields: int, extra_ok: bool, layout: str
) -> tuple[Block, int]:
    """Tokens of ``buffer[:size]`` (whole lines), and how many lines that was."""
    body = buffer[:size]
    grid = _tokenize_simple(body, fields)
    if grid is not None:
        numbers = np.arange(first_line, first_line + grid.shape[0], dtype=np.int64)
        return Block(buffer, grid, numbers), grid.shape[0]
    starts, ends, numbers, newlines = _tokenize_general(
        body, first_line, path, fields, extra_ok, layout
    )
    return Block(buffer, ends, numbers, starts), newlines


def _positions(mask: np.ndarray) -> IntArray:
    return np.flatnonzero(mask).astype(np.int64, copy=False)


def _tokenize_simple(body: Bytes, fields: int) -> IntArray | None:
    """Token ends when every line is ``fields`` tokens joined by single separators; else None."""
    space = body <= 32
    # Two whitespace bytes in a row mean an empty token, a blank line or \r\n.
    if bool(space[0]) or bool((space[1:] & space[:-1]).any()):
        return None
    if int(np.count_nonzero(body == _RETURN)):
        return None  # a lone \r ends a line; the general path splits there
    separators = _positions(space)
    if separators.size % fields:
        return None
    grid = separators.reshape(-1, fields)
    lines = grid.shape[0]
    # Every newline sits in the last column, so no line has more or fewer fields.
    if int(np.count_nonzero(body == _NEWLINE)) != lines or not bool(
        (body[grid[:, -1]] == _NEWLINE).all()
    ):
        return None
    line_starts = np.empty(lines, dtype=np.int64)
    line_starts[0] = 0
    line_starts[1:] = grid[:-1, -1] + 1
    if bool((body[line_starts] == _HASH).any()):
        return None  # a comment line
    return grid


def _tokenize_general(
    body: Bytes, first_line: int, path: Path, fields: int, extra_ok: bool, layout: str
) -> tuple[IntArray, IntArray, IntArray, int]:
    space = body <= 32
    previous_space = np.empty_like(space)
    previous_space[0] = True
    previous_space[1:] = space[:-1]
    token_starts = _positions(~space & previous_space)
    token_ends = _positions(space & ~previous_space)
    newlines = _positions(_line_ends(body))
    token_line = np.searchsorted(newlines, token_starts)
    per_line = np.bincount(token_line, minlength=newlines.size)
    first_token = np.zeros(newlines.size, dtype=np.int64)
    np.cumsum(per_line[:-1], out=first_token[1:])
    has_tokens = per_line > 0
    is_comment = np.zeros(newlines.size, dtype=bool)
    is_comment[has_tokens] = body[token_starts[first_token[has_tokens]]] == _HASH
    data_line = has_tokens & ~is_comment
    bad = data_line & ((per_line < fields) | ((per_line > fields) & (not extra_ok)))
    if bool(bad.any()):
        line = int(np.flatnonzero(bad)[0])
        found = int(per_line[line])
        raise InputError(
            f"expected {fields} whitespace-separated fields ({layout}), found {found}",
            file=path,
            line=first_line + line,
        )
    lines = np.flatnonzero(data_line)
    columns = first_token[lines][:, None] + np.arange(fields, dtype=np.int64)[None, :]
    numbers = lines.astype(np.int64) + first_line
    return token_starts[columns], token_ends[columns], numbers, int(newlines.size)
