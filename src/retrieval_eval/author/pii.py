"""`import queries --redact`: personal data taken out of logged queries before anything
is written (the candidate fixtures, the report, any cache the retriever fills).

Each pattern replaces what it matches with a placeholder naming what was there, so a
reviewer still reads "call [phone] about my order". The patterns are deliberately
broad (a false alarm costs a query's wording, a miss leaks a person's data); more can
be given with ``--redact-pattern``. docs/golden-datasets.md lists them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Pattern:
    name: str
    regex: re.Pattern[str]

    @property
    def placeholder(self) -> str:
        return f"[{self.name}]"


# Order matters: an email's digits must not be taken for a number first.
PATTERNS: tuple[Pattern, ...] = (
    # Anything@host.tld, with every character RFC 5322 allows unquoted in the local part.
    Pattern("email", re.compile(r"[\w.!#$%&'*+/=?^`{|}~-]+@[\w-]+(?:\.[\w-]+)+", re.ASCII)),
    Pattern("url", re.compile(r"\bhttps?://\S+", re.IGNORECASE)),
    Pattern("ip", re.compile(r"(?<![\d.])\d{1,3}(?:\.\d{1,3}){3}(?![\d.])")),
    # Phone, card, account and id numbers: 7 or more digits, up to three spaces, dots,
    # dashes, slashes or brackets between two of them, an optional leading +; wherever they
    # stand (an id glued to letters, "ID1234567", is still someone's).
    Pattern("number", re.compile(r"\+?\(?\d(?:[\s()./-]{0,3}\d){6,}")),
)


def redaction_patterns(extra: Sequence[str] = ()) -> tuple[Pattern, ...]:
    """The built-in patterns and the user's own (``--redact-pattern``), each a regex."""
    custom = []
    for number, text in enumerate(extra, start=1):
        try:
            custom.append(Pattern("redacted", re.compile(text)))
        except re.error as error:
            raise ValueError(
                f"--redact-pattern #{number} {text!r} is not a regex: {error}"
            ) from None
    return (*PATTERNS, *custom)


def redact(text: str, patterns: Sequence[Pattern] = PATTERNS) -> str:
    for pattern in patterns:
        text = pattern.regex.sub(pattern.placeholder, text)
    return text
