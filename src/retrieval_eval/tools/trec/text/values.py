"""Token spans to fixed-width keys and numbers, eight bytes per numpy operation.

Ids are packed into zero-padded 64-bit words (one unaligned load per 8 bytes of
id instead of one gather per byte). Byte-swapped, the words compare like
``strcmp`` on the ids, which is what trec_eval's tie-break uses.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TypeVar, overload

import numpy as np
import numpy.typing as npt

from retrieval_eval.errors import InputError

# The array types every numpy stage shares (score/ranked.py re-exports them).
IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]
WordArray = npt.NDArray[np.uint64]
# Widest packed id: 16 words = 128 bytes (see words_for for longer ids).
MAX_WORDS = 16
# _KEEP_BYTES[n] keeps the low n bytes of a little-endian word.
_KEEP_BYTES = np.array([(1 << (8 * n)) - 1 for n in range(9)], dtype=np.uint64)


def unaligned_words(buffer: np.ndarray) -> np.ndarray:
    """A uint64 view with a one-byte stride: element i is the 8 bytes starting at byte i,
    so an unaligned load is a single gather."""
    return np.ndarray(shape=(buffer.size - 7,), dtype="<u8", buffer=buffer, strides=(1,))


def load_words(
    buffer: np.ndarray, starts: IntArray, lengths: IntArray, num_words: int
) -> WordArray:
    """(n, num_words) little-endian words holding each token's bytes, zero-padded.

    ``buffer`` must hold at least 8 bytes after every token's end (trec.tokens pads
    each block). ``num_words`` is sized for the longest token, so a shorter token near
    the end of the buffer has word offsets past its end: those loads are clamped into
    the buffer and masked to zero, as they hold no byte of the token.
    """
    unaligned = unaligned_words(buffer)
    last = unaligned.size - 1
    out = np.empty((starts.size, num_words), dtype=np.uint64)
    for word in range(num_words):
        if word == 0:
            out[:, 0] = unaligned[starts] & _KEEP_BYTES[np.minimum(lengths, 8)]
            continue
        remaining = np.clip(lengths - 8 * word, 0, 8)
        offsets = np.minimum(starts + 8 * word, last)
        out[:, word] = unaligned[offsets] & _KEEP_BYTES[remaining]
    return out


def words_for(
    buffer: np.ndarray, starts: IntArray, ends: IntArray, *, capped: bool = True
) -> WordArray:
    """Packed tokens, at most MAX_WORDS words each (unless not ``capped``).

    Every row of a column shares the width of its longest token, so one huge id (a
    3 MB "document id" has been seen) must not widen ten million rows. A token longer
    than MAX_WORDS words keeps its first MAX_WORDS - 1 words exactly; its last word is a
    64-bit hash of the rest, with its top bit set. Query ids and scores are not capped:
    their text is needed whole.
    """
    lengths = ends - starts
    longest = int(lengths.max()) if lengths.size else 1
    width = max(1, -(-longest // 8))
    if width <= MAX_WORDS or not capped:
        return load_words(buffer, starts, lengths, width)
    words = load_words(buffer, starts, np.minimum(lengths, 8 * MAX_WORDS), MAX_WORDS)
    kept = 8 * (MAX_WORDS - 1)
    for row in np.flatnonzero(lengths > 8 * MAX_WORDS).tolist():
        rest = buffer[int(starts[row]) + kept : int(ends[row])].tobytes()
        digest = int.from_bytes(hashlib.blake2b(rest, digest_size=8).digest(), "little")
        words[row, -1] = np.uint64(digest | (1 << 63))
    return words


def widen(words: WordArray, num_words: int) -> WordArray:
    if words.shape[1] == num_words:
        return words
    out = np.zeros((words.shape[0], num_words), dtype=np.uint64)
    out[:, : words.shape[1]] = words
    return out


def as_bytes_strings(words: WordArray) -> np.ndarray:
    """The tokens as numpy ``S`` strings (a view; trailing zero bytes are padding)."""
    contiguous = np.ascontiguousarray(words)
    return contiguous.view(f"S{8 * words.shape[1]}").reshape(-1)


def order_keys(words: WordArray) -> WordArray:
    """Big-endian words: integer order equals byte-wise (strcmp) order of the ids."""
    return words.byteswap()


def parse_floats(
    words: WordArray, lengths: IntArray, line_numbers: IntArray, path: Path, what: str
) -> FloatArray:
    """Decimal tokens to float64, exactly as C's strtod rounds them."""
    strings = as_bytes_strings(words)
    if (
        int(lengths.max(initial=0)) > 8 * words.shape[1]
    ):  # pragma: no cover - words_for sizes to fit
        raise AssertionError("token wider than its words")
    try:
        if not _has_underscore(strings):
            return strings.astype(np.float64)
    except ValueError:
        pass
    out = np.empty(strings.size, dtype=np.float64)
    for row, token in enumerate(strings.tolist()):
        try:
            out[row] = _python_number(float, token)
        except ValueError:
            text = token.decode("utf-8", "replace")
            raise InputError(
                f"{what} {text!r} is not a number", file=path, line=int(line_numbers[row])
            ) from None
    return out


def parse_grades(words: WordArray, line_numbers: IntArray, path: Path, what: str) -> IntArray:
    """Qrels grades read as trec_eval reads them, with C's ``atol``.

    The leading integer counts and the rest of the token is ignored: ``1.0`` and ``1.5``
    are 1, ``0.3`` is 0, ``1e+8`` is 1, ``1_000`` is 1. Two departures, both errors naming
    the line: a token with no leading digits, which ``atol`` would silently read as 0 (it
    is almost always a column in the wrong place), and a value past 64 bits, which
    ``atol`` clamps and trec_eval then fails on (it sizes a table by the highest grade).
    """
    strings = as_bytes_strings(words)
    try:
        if not _has_underscore(strings):
            return strings.astype(np.int64)
    except (ValueError, OverflowError):
        pass
    out = np.empty(strings.size, dtype=np.int64)
    for row, token in enumerate(strings.tolist()):
        match = _LEADING_INTEGER.match(token)
        if match is None:
            text = token.decode("utf-8", "replace")
            raise InputError(
                f"{what} {text!r} is not an integer", file=path, line=int(line_numbers[row])
            )
        value = int(match.group())
        if not _INT64_MIN <= value <= _INT64_MAX:
            raise InputError(
                f"{what} {token.decode('utf-8', 'replace')!r} is out of range; "
                f"grades must lie within ±{_INT64_MAX:,}",
                file=path,
                line=int(line_numbers[row]),
            )
        out[row] = value
    return out


_LEADING_INTEGER = re.compile(rb"[+-]?[0-9]+")
_Number = TypeVar("_Number", int, float)
_INT64_MIN, _INT64_MAX = int(np.iinfo(np.int64).min), int(np.iinfo(np.int64).max)


def _has_underscore(strings: np.ndarray) -> bool:
    """Python's number syntax (and so numpy's cast) reads ``1_000`` as 1000; C's does not."""
    return bool((np.char.find(strings, b"_") >= 0).any())


def _python_number(kind: type[_Number], token: bytes) -> _Number:
    """``kind(token)``, refusing the digit separators C's strtod and strtol stop at."""
    if b"_" in token:
        raise ValueError(token)
    return kind(token)


class PackedIds(Sequence[str]):
    """Ids kept packed (one row of words each) and decoded only when one is read.

    A 100k-query file names 100k ids, but only the ones printed or named in an error
    are ever needed as text; decoding all of them was a measurable share of ``trec``.
    """

    __slots__ = ("_words",)

    def __init__(self, words: WordArray) -> None:
        self._words = words

    def __len__(self) -> int:
        return int(self._words.shape[0])

    @overload
    def __getitem__(self, index: int) -> str: ...
    @overload
    def __getitem__(self, index: slice) -> PackedIds: ...
    def __getitem__(self, index: int | slice) -> str | PackedIds:
        if isinstance(index, slice):
            return PackedIds(self._words[index])
        raw: bytes = as_bytes_strings(self._words[index][None, :])[0]
        return raw.decode("utf-8", "replace")

    def __iter__(self) -> Iterator[str]:
        return (raw.decode("utf-8", "replace") for raw in as_bytes_strings(self._words).tolist())

    def take(self, rows: IntArray) -> PackedIds:
        """The ids at ``rows``, still packed."""
        return PackedIds(self._words[rows])

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Sequence) and not isinstance(other, str):
            return list(self) == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"PackedIds({list(self)!r})"


def take_ids(ids: Sequence[str], rows: IntArray) -> Sequence[str]:
    """``ids`` at ``rows``: packed ids stay packed, others become a tuple."""
    if isinstance(ids, PackedIds):
        return ids.take(rows)
    return tuple(map(ids.__getitem__, rows.tolist()))
