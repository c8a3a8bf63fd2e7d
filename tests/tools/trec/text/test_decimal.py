"""The fast score parser must give exactly what C's strtod (and Python's float) gives."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from retrieval_eval.tools.trec.text.decimal import parse_short_decimals, parse_uniform_decimals
from retrieval_eval.tools.trec.text.values import load_words, unaligned_words


def _parse(tokens: list[str]) -> tuple[np.ndarray, np.ndarray]:
    text = " ".join(tokens).encode() + b"\0" * 16
    buffer = np.frombuffer(text, dtype=np.uint8).copy()
    lengths = np.array([len(t.encode()) for t in tokens], dtype=np.int64)
    starts = np.concatenate([[0], np.cumsum(lengths + 1)[:-1]]).astype(np.int64)
    words = load_words(buffer, starts, np.minimum(lengths, 8), 1)[:, 0]
    return parse_short_decimals(words, lengths)


@pytest.mark.slow
def test_random_short_decimals_are_exact() -> None:
    rng = np.random.default_rng(11)
    tokens = []
    for _ in range(50_000):
        digits = "".join(rng.choice(list("0123456789"), size=int(rng.integers(1, 8))))
        dot = int(rng.integers(0, len(digits) + 1))
        token = digits[:dot] + "." + digits[dot:] if rng.random() < 0.8 else digits
        sign = str(rng.choice(["", "", "-", "+"]))
        tokens.append((sign + token)[:8])
    values, handled = _parse(tokens)
    assert handled.all()
    for token, value in zip(tokens, values.tolist(), strict=True):
        assert value == float(token) and np.signbit(value) == np.signbit(float(token)), token


def test_other_forms_are_left_to_the_general_parser() -> None:
    tokens = ["1e5", "123456789", "-", ".", "1.2.3", "--1", "nan", "inf", "0x10", "12a"]
    _, handled = _parse(tokens)
    assert not handled.any()
    values, handled = _parse(["-0", "+.5", "5.", "00000001"])
    assert handled.all()
    assert values.tolist() == [0.0, 0.5, 5.0, 1.0] and np.signbit(values[0])


def _uniform(tokens: list[str]) -> np.ndarray | None:
    text = " ".join(tokens).encode() + b"\0" * 16
    buffer = np.frombuffer(text, dtype=np.uint8).copy()
    length = len(tokens[0])
    starts = np.arange(len(tokens), dtype=np.int64) * (length + 1)
    words = unaligned_words(buffer)[starts]  # bytes past each token left in: the parser masks
    return parse_uniform_decimals(words, length)


@settings(max_examples=300, deadline=None)
@given(
    st.integers(1, 8).flatmap(
        lambda length: st.tuples(
            st.just(length),
            st.integers(-1, length - 1),
            st.lists(st.text("0123456789", min_size=length, max_size=length), min_size=1),
        )
    )
)
def test_one_layout_parses_as_strtod_does(case: tuple[int, int, list[str]]) -> None:
    length, dot, digit_strings = case
    tokens = [d if dot < 0 else d[:dot] + "." + d[dot + 1 :] for d in digit_strings]
    values = _uniform(tokens)
    if dot >= 0 and length == 1:  # "." alone is no number
        assert values is None
        return
    assert values is not None
    assert values.tolist() == [float(t) for t in tokens]


def test_mixed_layouts_are_left_to_the_other_parsers() -> None:
    for tokens in (["1.25", "12.5"], ["1.25", "-1.2"], ["1.25", "1e10"], ["1.25", "1.2a"]):
        assert _uniform(tokens) is None, tokens
    assert _uniform(["+1.5", "+2.5"]) is None  # signs: the general parser
    values = _uniform(["0.50", "5.00", "9.99"])
    assert values is not None and values.tolist() == [0.5, 5.0, 9.99]
