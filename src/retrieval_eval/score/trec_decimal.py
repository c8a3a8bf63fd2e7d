"""Short decimal numbers (``-12.345``) from packed 8-byte words, all rows at once.

numpy's own bytes-to-float cast costs ~100 ns per value, more than the rest of
parsing a run line. Scores in run files are nearly always at most 8 characters
of ``[-+]digits[.digits]``; for those, SIMD-within-a-register arithmetic turns
each word into its digits in a dozen vectorised integer operations. Any value
has at most 8 digits here, so the integer mantissa is exact and one IEEE
division by an exact power of ten gives the correctly rounded double, the same
result as C's strtod (trec_eval's atof). Rows that do not fit are reported as
not handled so the caller can parse them the slow, general way.
"""

from __future__ import annotations

import numpy as np

from retrieval_eval.score.ranked import FloatArray, IntArray
from retrieval_eval.score.trec_values import WordArray

_U = np.uint64
_ONES = _U(0x0101010101010101)
_HIGH = _U(0x8080808080808080)
_ZEROS = _U(0x3030303030303030)  # eight ASCII '0'
_DOTS = _U(0x2E2E2E2E2E2E2E2E)
_NIBBLE = _U(0xF0F0F0F0F0F0F0F0)
_SIXES = _U(0x0606060606060606)
_LOW_BYTES = np.array([(1 << (8 * n)) - 1 for n in range(9)], dtype=np.uint64)
_LOW_BYTES.flags.writeable = False
_POWERS_OF_TEN = np.array([10.0**n for n in range(9)], dtype=np.float64)
_POWERS_OF_TEN.flags.writeable = False
_MINUS, _PLUS = 45, 43


def _lowest_zero_byte(x: WordArray) -> IntArray:
    """Index (0-7) of the lowest zero byte of each word, 8 if none.

    The classic has-zero-byte test can flag bytes above a real zero byte, never
    below one, so its lowest flag is exact.
    """
    flags = (x - _ONES) & ~x & _HIGH
    lowest = flags & (~flags + _U(1))
    index = (np.bitwise_count(lowest - _U(1)) >> np.uint8(3)).astype(np.int64)
    return np.where(flags == 0, 8, index)


def parse_short_decimals(words: WordArray, lengths: IntArray) -> tuple[FloatArray, np.ndarray]:
    """(values, handled): values[i] is valid where handled[i] is True."""
    word = words.copy()
    length = lengths.astype(np.int64, copy=True)
    first = (word & _U(0xFF)).astype(np.int64)
    signed = (first == _MINUS) | (first == _PLUS)
    negative = first == _MINUS
    word[signed] >>= _U(8)
    length[signed] -= 1
    handled = (length >= 1) & (length <= 8)
    length = np.clip(length, 0, 8)

    dot = _lowest_zero_byte(word ^ _DOTS)
    has_dot = dot < length
    dot = np.where(has_dot, dot, length)
    below = _LOW_BYTES[dot]
    digits = (word & below) | ((word >> _U(8)) & ~below)  # the dot byte squeezed out
    count = length - has_dot
    handled &= count >= 1
    fraction = np.where(has_dot, length - dot - 1, 0)

    mask = _LOW_BYTES[np.clip(count, 0, 8)]
    is_digit = ((digits & _NIBBLE) == (_ZEROS & mask)) & (
        (((digits + _SIXES) & _NIBBLE) & mask) == (_ZEROS & mask)
    )
    handled &= is_digit

    # Right-align the digits in eight bytes, padding with leading '0's.
    pad_bytes = (8 - np.clip(count, 0, 8)).astype(np.uint64)
    aligned = (digits << (pad_bytes << _U(3))) | (_ZEROS & _LOW_BYTES[pad_bytes.astype(np.int64)])
    value = aligned - _ZEROS
    value = (value * _U(10) + (value >> _U(8))) & _U(0x00FF00FF00FF00FF)
    value = (value * _U(100) + (value >> _U(16))) & _U(0x0000FFFF0000FFFF)
    value = (value * _U(10000) + (value >> _U(32))) & _U(0x00000000FFFFFFFF)

    result = value.astype(np.float64) / _POWERS_OF_TEN[np.clip(fraction, 0, 8)]
    np.negative(result, out=result, where=negative)
    return result, handled
