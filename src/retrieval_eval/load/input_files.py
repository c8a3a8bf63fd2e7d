"""Opening an input file (a corpus note, a dataset, a corpus database) safely.

Corpus and dataset files come from the pull request under review. Two things
in them must never be read:

- a file that resolves outside the allowed roots (the repository, plus any
  ``outside_roots`` the user names): a note that is a symlink to
  ``/proc/self/environ`` would put the runner's environment into the report;
- anything that is not a regular file: a FIFO blocks a reader for ever, and
  ``/dev/zero`` fills memory until the job dies;
- more than a file of its size can hold: a few kilobytes of gzip that inflate to
  millions of lines would keep the run busy for minutes (``MAX_GZIP_RATIO``,
  ``MAX_DECOMPRESSED_BYTES``; ``MAX_LINES`` bounds a JSONL file's lines,
  ``MAX_TREC_LINES`` a TREC run's or qrels file's).

The allowed roots are set for the duration of a run by ``reading_within``
(the pipeline and ``validate`` do), so every loader checks the same rule
without each one being handed the roots. With no roots set (a loader used on
its own), only the regular-file rule applies.
"""

from __future__ import annotations

import gzip
import io
import os
import stat
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import BinaryIO

from retrieval_eval.errors import InputError, shown_path

# Lines of one JSONL file, blank ones included: BEIR's largest corpus (MS MARCO) has 8.8 M.
MAX_LINES = 10_000_000
# Lines of one TREC run or qrels file: 2 million queries x 100 results, about 7 GB of text,
# which the numpy reader (tools/trec/text/) holds in about 8 GB.
MAX_TREC_LINES = 200_000_000
# Bytes a gzipped file may inflate to per byte it holds: JSON text compresses 3 to 10 times,
# while a stream of one repeated byte (a gzip bomb) inflates about 1,000 times.
MAX_GZIP_RATIO = 100
# Below this, any ratio is accepted: a small file of repetitive records is no threat.
GZIP_RATIO_FROM_BYTES = 1 << 20
MAX_DECOMPRESSED_BYTES = 16 << 30

_ROOTS: ContextVar[tuple[Path, ...] | None] = ContextVar("input_roots", default=None)
_KINDS = {
    stat.S_IFIFO: "a FIFO (named pipe)",
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
    stat.S_IFSOCK: "a socket",
}


@contextmanager
def reading_within(roots: Sequence[Path]) -> Iterator[None]:
    token = _ROOTS.set(tuple(root.resolve() for root in roots))
    try:
        yield
    finally:
        _ROOTS.reset(token)


def check_inside(path: Path) -> None:
    """Raise unless ``path``, symlinks followed, lies under an allowed root."""
    roots = _ROOTS.get()
    if roots is None:
        return
    resolved = path.resolve()
    if not any(resolved.is_relative_to(root) for root in roots):
        shown = ", ".join(shown_path(root) for root in roots)  # the repository itself is "."
        raise InputError(
            f"resolves to {resolved}, outside the repository ({shown}); refusing to read it. "
            "If that is intended, name its folder in `outside_roots` in retrieval-eval.toml",
            file=path,
        )


def check_regular(path: Path) -> None:
    """Raise unless ``path`` is inside the roots and is a regular file (without opening it)."""
    check_inside(path)
    try:
        mode = path.stat().st_mode
    except OSError as error:
        raise InputError(f"cannot read: {error.strerror or error}", file=path) from None
    _require_regular(mode, path)


def open_input(path: Path) -> BinaryIO:
    """Open for reading in binary; never blocks on a FIFO, never reads a device."""
    check_inside(path)
    return open_regular(path)


def open_regular(path: Path) -> BinaryIO:
    """:func:`open_input` without the roots rule, for a file the run's own configuration
    names rather than the tree under review (the baseline, which the Action reads from a
    scratch copy of the base commit's)."""
    try:
        # O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer.
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as error:
        raise InputError(f"cannot read file: {error.strerror or error}", file=path) from None
    try:
        _require_regular(os.fstat(fd).st_mode, path)
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return os.fdopen(fd, "rb")


def read_regular_bytes(path: Path, *, max_bytes: int, what: str) -> bytes:
    """The bytes of the regular file ``path`` (:func:`open_regular`), refused at once, before
    any is read, when it holds more than ``max_bytes``; ``what`` names the file's kind."""
    with open_regular(path) as handle:
        size = os.fstat(handle.fileno()).st_size
        data = b"" if size > max_bytes else handle.read(max_bytes + 1)
    if size > max_bytes or len(data) > max_bytes:
        raise InputError(
            f"is {max(size, len(data)):,} bytes, more than any {what} holds "
            f"({max_bytes:,} at most); refusing to read it",
            file=path,
        )
    return data


UTF8_BOM = b"\xef\xbb\xbf"
# Longest first: the UTF-32 little-endian mark begins with the UTF-16 one.
_WIDE_BOMS = (
    (b"\xff\xfe\x00\x00", "UTF-32"),
    (b"\x00\x00\xfe\xff", "UTF-32"),
    (b"\xff\xfe", "UTF-16"),
    (b"\xfe\xff", "UTF-16"),
)


def wide_encoding_problem(head: bytes) -> str | None:
    """The message for a file whose first bytes are a UTF-16 or UTF-32 byte-order mark.

    Such text is not readable as UTF-8 (every other byte is NUL), and PowerShell's ``>``
    writes it, so it is named rather than reported as invalid bytes line after line.
    """
    for mark, encoding in _WIDE_BOMS:
        if head.startswith(mark):
            return (
                f"the file is {encoding} text (it starts with a {encoding} byte-order mark); "
                "save it as UTF-8 (in PowerShell: Out-File -Encoding utf8)"
            )
    return None


def open_maybe_gzipped(path: Path) -> BinaryIO:
    """:func:`open_input`, decompressing as it reads when the name ends in ``.gz``
    (BEIR's ``corpus.jsonl.gz``). A corrupt or truncated stream raises OSError, EOFError
    or zlib.error from a later read."""
    handle = open_input(path)
    if not path.name.lower().endswith(".gz"):
        return handle
    return bounded_gzip(handle, path)


def bounded_gzip(handle: BinaryIO, path: Path, *, buffer_size: int = 1 << 16) -> io.BufferedReader:
    """The decompressed stream of an open gzip file, bounded as every input is: at most
    ``MAX_GZIP_RATIO`` times the file's size (any ratio below ``GZIP_RATIO_FROM_BYTES``),
    and never past ``MAX_DECOMPRESSED_BYTES``. A pipe, whose size is unknown, gets the
    absolute bound alone. Closing the stream closes ``handle``. A small ``buffer_size``
    lets a caller peek at the first bytes without inflating further."""
    status = os.fstat(handle.fileno())
    limit = MAX_DECOMPRESSED_BYTES
    if stat.S_ISREG(status.st_mode):
        packed = status.st_size
        limit = min(limit, max(GZIP_RATIO_FROM_BYTES, packed * MAX_GZIP_RATIO))
    return io.BufferedReader(_BoundedGzip(handle, path, limit), buffer_size=buffer_size)


class _BoundedGzip(io.RawIOBase):
    """A gzip stream that stops with an ``InputError`` once it has inflated past ``limit``."""

    def __init__(self, handle: BinaryIO, path: Path, limit: int) -> None:
        super().__init__()
        self._handle = handle
        self._stream = gzip.GzipFile(fileobj=handle, mode="rb")
        self._path = path
        self._limit = limit
        self._inflated = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        count = self._stream.readinto(buffer)
        self._inflated += count
        if self._inflated > self._limit:
            if self._limit == MAX_DECOMPRESSED_BYTES:
                what = f"more than {MAX_DECOMPRESSED_BYTES >> 30} GiB"
            else:
                what = f"more than {MAX_GZIP_RATIO} times its compressed size"
            raise InputError(
                f"decompresses to {what}, which no real corpus or dataset does (a gzip bomb?); "
                "refusing to read on: store it uncompressed, or split it",
                file=self._path,
            )
        return count

    def close(self) -> None:
        if not self.closed:
            try:
                self._stream.close()
            finally:
                self._handle.close()
        super().close()


def too_many_lines(path: Path, limit: int = MAX_LINES) -> InputError:
    """The error for a file past its line bound (``MAX_LINES``, ``MAX_TREC_LINES``)."""
    return InputError(
        f"has more than {limit:,} lines (blank lines included), more than retrieval-eval "
        "reads from one file; split it or remove the blank lines",
        file=path,
    )


def read_input_bytes(path: Path) -> bytes:
    with open_input(path) as handle:
        return handle.read()


def _require_regular(mode: int, path: Path) -> None:
    if stat.S_ISDIR(mode):
        raise InputError("cannot read file: Is a directory", file=path)
    if not stat.S_ISREG(mode):
        kind = _KINDS.get(stat.S_IFMT(mode), "not a regular file")
        raise InputError(f"is {kind}, not a regular file; refusing to read it", file=path)
