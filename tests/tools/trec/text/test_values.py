"""Packed ids and numbers of TREC text (tools/trec/text/values.py): ids keep their bytes
and order as C's ``strcmp`` orders them; scores are read as ``strtod`` reads them, grades
as ``atol`` does."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from retrieval_eval.errors import InputError
from retrieval_eval.tools.trec.text.values import (
    MAX_WORDS,
    PackedIds,
    as_bytes_strings,
    order_keys,
    parse_floats,
    parse_grades,
    words_for,
)

IDS = st.lists(
    st.binary(min_size=1, max_size=40).filter(lambda b: b"\0" not in b), min_size=1, max_size=20
)
FILE = Path("qrels")


def packed(tokens: list[bytes], *, capped: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """The tokens packed from one buffer, as a block holds them (with 16 bytes after)."""
    buffer = np.frombuffer(b" ".join(tokens) + bytes(16), dtype=np.uint8).copy()
    lengths = np.array([len(t) for t in tokens], dtype=np.int64)
    starts = np.concatenate([[0], np.cumsum(lengths + 1)[:-1]]).astype(np.int64)
    return words_for(buffer, starts, starts + lengths, capped=capped), lengths


@given(IDS)
def test_ids_keep_their_bytes_and_strcmp_order(tokens: list[bytes]) -> None:
    words, _ = packed(tokens)
    assert [s.rstrip(b"\0") for s in as_bytes_strings(words).tolist()] == tokens
    keys = [tuple(row) for row in order_keys(words).tolist()]
    by_key = sorted(range(len(tokens)), key=lambda i: keys[i])
    assert [tokens[i] for i in by_key] == sorted(tokens)


def test_an_id_past_the_widest_packing_is_kept_apart_by_a_hash() -> None:
    long = b"x" * (8 * MAX_WORDS + 50)
    other = long[:-1] + b"y"
    words, _ = packed([long, other, b"short"])
    assert words.shape[1] == MAX_WORDS
    assert not (words[0] == words[1]).all()  # same first 120 bytes, different hashes
    assert bool(words[0, -1] >> np.uint64(63))  # the hashed word has its top bit set
    whole, _ = packed([long], capped=False)
    assert as_bytes_strings(whole)[0] == long


@given(st.lists(st.floats(allow_nan=False, allow_infinity=False), min_size=1, max_size=10))
def test_scores_read_as_strtod_reads_them(numbers: list[float]) -> None:
    tokens = [repr(n).encode() for n in numbers]
    words, lengths = packed(tokens)
    lines = np.arange(1, len(tokens) + 1, dtype=np.int64)
    assert parse_floats(words, lengths, lines, FILE, "score").tolist() == numbers


def test_a_score_that_is_no_number_names_its_line() -> None:
    words, lengths = packed([b"1.5", b"1_000", b"abc"])
    with pytest.raises(InputError, match="score '1_000' is not a number") as bad:
        parse_floats(words, lengths, np.array([4, 5, 6]), FILE, "score")
    assert bad.value.line == 5


@given(st.lists(st.integers(-(2**62), 2**62), min_size=1, max_size=10), st.data())
def test_grades_read_as_atol_reads_them(grades: list[int], data: st.DataObject) -> None:
    """The leading integer counts; whatever follows it is ignored."""
    tails = data.draw(
        st.lists(
            st.sampled_from(["", ".0", ".7", "e+8", "_000", "x"]),
            min_size=len(grades),
            max_size=len(grades),
        )
    )
    tokens = [f"{g}{t}".encode() for g, t in zip(grades, tails, strict=True)]
    words, _ = packed(tokens)
    lines = np.arange(1, len(tokens) + 1, dtype=np.int64)
    assert parse_grades(words, lines, FILE, "grade").tolist() == grades


def test_a_grade_without_digits_or_past_64_bits_names_its_line() -> None:
    words, _ = packed([b"1", b"rel"])
    with pytest.raises(InputError, match="grade 'rel' is not an integer") as bad:
        parse_grades(words, np.array([1, 2]), FILE, "grade")
    assert bad.value.line == 2
    words, _ = packed([b"99999999999999999999"])
    with pytest.raises(InputError, match="out of range"):
        parse_grades(words, np.array([7]), FILE, "grade")


def test_packed_ids_read_as_strings() -> None:
    words, _ = packed([b"q1", b"q10", b"doc"])
    ids = PackedIds(words)
    assert list(ids) == ["q1", "q10", "doc"]
    assert ids[1] == "q10"
    assert list(ids.take(np.array([2, 0]))) == ["doc", "q1"]
