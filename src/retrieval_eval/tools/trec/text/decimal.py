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

from retrieval_eval.tools.trec.text.values import FloatArray, IntArray, WordArray

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
    # For no flag, lowest - 1 wraps to all ones: 64 bits -> index 8, as wanted.
    return (np.bitwise_count(lowest - _U(1)) >> np.uint8(3)).astype(np.int64)


def parse_short_decimals(words: WordArray, lengths: IntArray) -> tuple[FloatArray, np.ndarray]:
    """(values, handled): values[i] is valid where handled[i] is True.

    ``words`` hold the first 8 bytes of each token, zero beyond its length.
    """
    length = np.minimum(lengths, 9)  # 9 = too long; such rows end up not handled
    first = words & _U(0xFF)
    negative = first == _U(_MINUS)
    signed = negative | (first == _U(_PLUS))
    if bool(signed.any()):
        words = np.where(signed, words >> _U(8), words)
        length = length - signed
    handled = (length >= 1) & (length <= 8)
    np.minimum(length, 8, out=length)

    dot = _lowest_zero_byte(words ^ _DOTS)
    has_dot = dot < length
    np.minimum(dot, length, out=dot)
    below = _LOW_BYTES[dot]
    digits = (words & below) | ((words >> _U(8)) & ~below)  # the dot byte squeezed out
    count = length - has_dot
    handled &= count >= 1
    fraction = length - dot - has_dot  # digits after the dot (0 without one)

    mask = _LOW_BYTES[count]
    zeros = _ZEROS & mask
    handled &= (digits & _NIBBLE) == zeros
    handled &= ((digits + _SIXES) & _NIBBLE & mask) == zeros

    # Right-align the digits in eight bytes, padding with leading '0's.
    pad = 8 - count
    value = (digits << (pad.astype(np.uint64) << _U(3))) | (_ZEROS & _LOW_BYTES[pad])
    value -= _ZEROS
    value = (value * _U(10) + (value >> _U(8))) & _U(0x00FF00FF00FF00FF)
    value = (value * _U(100) + (value >> _U(16))) & _U(0x0000FFFF0000FFFF)
    value = (value * _U(10000) + (value >> _U(32))) & _U(0x00000000FFFFFFFF)

    result = value.astype(np.float64)
    result /= _POWERS_OF_TEN[fraction]
    np.negative(result, out=result, where=negative)
    return result, handled


def parse_uniform_decimals(words: WordArray, length: int) -> FloatArray | None:
    """Values of tokens that all share one layout, or None when they do not.

    ``words`` hold the first 8 bytes of each token (bytes past ``length`` are ignored).
    Every token must be ``length`` (1-8) bytes of unsigned digits with the dot, if the
    first token has one, at the same place in each: the usual form of a run's scores
    (``%.4f`` of values of one magnitude). The dot's place and the digit count are then
    the same for every row, so each step is one vectorised operation with a scalar
    operand, about half the work of :func:`parse_short_decimals`; the result is the same.
    """
    if not 1 <= length <= 8 or words.size == 0:
        return None
    keep = _LOW_BYTES[length]
    words = words & keep
    first = int(words[0])
    dot = next((i for i in range(length) if (first >> (8 * i)) & 0xFF == 0x2E), None)
    if dot is None:
        digits, count, fraction = words, length, 0
    else:
        dot_byte = _U(0x2E << (8 * dot))
        if not bool(((words & _U(0xFF << (8 * dot))) == dot_byte).all()):
            return None
        below = _LOW_BYTES[dot]
        digits = (words & below) | ((words >> _U(8)) & ~below)
        count, fraction = length - 1, length - 1 - dot
    if count == 0:
        return None
    mask = _LOW_BYTES[count]
    zeros = _ZEROS & mask
    if not bool(((digits & _NIBBLE) == zeros).all()):
        return None
    if not bool((((digits + _SIXES) & _NIBBLE & mask) == zeros).all()):
        return None
    pad = 8 - count
    value = digits << _U(8 * pad)
    if pad:
        value |= _ZEROS & _LOW_BYTES[pad]
    value -= _ZEROS
    value = (value * _U(10) + (value >> _U(8))) & _U(0x00FF00FF00FF00FF)
    value = (value * _U(100) + (value >> _U(16))) & _U(0x0000FFFF0000FFFF)
    value = (value * _U(10000) + (value >> _U(32))) & _U(0x00000000FFFFFFFF)
    result = value.astype(np.float64)
    if fraction:
        result /= _POWERS_OF_TEN[fraction]
    return result
