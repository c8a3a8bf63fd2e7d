"""`import queries --redact`: no email, phone number or long number survives, whatever
surrounds it; ordinary words and short numbers do."""

from __future__ import annotations

import re

from hypothesis import example, given
from hypothesis import strategies as st

from retrieval_eval.author.pii import redact

words = st.text(st.characters(blacklist_characters="@"), max_size=40)
ANY_EMAIL = re.compile(r"\S@\S+\.\S")


@given(words, st.emails(), words)
@example("write to ", "a.b-c+d@mail.example.org", " today")
def test_no_email_survives(before: str, email: str, after: str) -> None:
    redacted = redact(before + email + after)
    assert email not in redacted
    assert "@" not in redacted
    assert not ANY_EMAIL.search(redacted)


no_digits = st.text(st.characters(blacklist_characters="0123456789"), max_size=40)


@given(
    no_digits,
    st.lists(st.integers(0, 9), min_size=7, max_size=16),
    st.sampled_from(["", " ", "-", ".", " - ", ") ", "/"]),
    no_digits,
)
@example("call ", [0, 2, 0, 7, 9, 4, 6, 0, 9, 5, 8], " ", "")
def test_no_long_number_survives(before: str, digits: list[int], gap: str, after: str) -> None:
    number = gap.join(str(d) for d in digits)
    redacted = redact(f"{before}{number}{after}")
    assert re.search(r"[0-9]", redacted) is None  # every digit was the number's


def test_words_and_short_numbers_stay() -> None:
    assert redact("iPhone 15 battery 2 hours") == "iPhone 15 battery 2 hours"
    assert redact("see https://example.org/a?b=1 from 10.0.0.12") == "see [url] from [ip]"
