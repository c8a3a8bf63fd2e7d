"""The fast score parser must give exactly what C's strtod (and Python's float) gives."""

from __future__ import annotations

import numpy as np

from retrieval_eval.load.trec_text.decimal import parse_short_decimals
from retrieval_eval.load.trec_text.values import load_words


def _parse(tokens: list[str]) -> tuple[np.ndarray, np.ndarray]:
    text = " ".join(tokens).encode() + b"\0" * 16
    buffer = np.frombuffer(text, dtype=np.uint8).copy()
    lengths = np.array([len(t.encode()) for t in tokens], dtype=np.int64)
    starts = np.concatenate([[0], np.cumsum(lengths + 1)[:-1]]).astype(np.int64)
    words = load_words(buffer, starts, np.minimum(lengths, 8), 1)[:, 0]
    return parse_short_decimals(words, lengths)


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
