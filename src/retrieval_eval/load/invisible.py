"""Which code points cannot be seen, so that two ids that differ only by them look the same.

An id is how a query is followed from the baseline to the pull request: ``k-005`` with a
WORD JOINER (U+2060) after it is a different id that reads exactly as ``k-005``, and a
regressed query renamed so reads as "removed k-005" beside "new k-005". Such ids are
refused where a fixture is read; ids are compared in Unicode's NFC form, so the same
letters typed composed or decomposed are one id.

The set: Unicode's Default_Ignorable_Code_Point property (the ranges below, from
DerivedCoreProperties.txt: code points a renderer shows as nothing), every control,
format, surrogate, private-use and unassigned code point, the line and paragraph
separators, every space other than U+0020 (each reads as a plain space), and the blank
Braille pattern U+2800.
"""

from __future__ import annotations

import re
import unicodedata

DEFAULT_IGNORABLE = (
    "\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e"
    "\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff0-\ufff8"
    "\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0000-\U000e0fff"
)
_DEFAULT_IGNORABLE = re.compile(f"[{DEFAULT_IGNORABLE}]")
_UNSEEN_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})
_BLANK = "\u2800"


def is_invisible(char: str) -> bool:
    """Whether the one code point ``char`` shows as nothing, or as a plain space."""
    if _DEFAULT_IGNORABLE.match(char) or char == _BLANK:
        return True
    category = unicodedata.category(char)
    return category in _UNSEEN_CATEGORIES or (category == "Zs" and char != " ")


def invisible_chars(text: str) -> list[str]:
    """The invisible code points of ``text``, each once, in order of first appearance."""
    if text.isascii() and text.isprintable():
        return []
    return list(dict.fromkeys(char for char in text if is_invisible(char)))


def code_point_name(char: str) -> str:
    """``U+2060 WORD JOINER``: how a message names a code point."""
    name = unicodedata.name(char, "")
    return f"U+{ord(char):04X}" + (f" {name}" if name else "")


def shown_code_point(char: str) -> str:
    """``\\u2060``: how an invisible code point is shown where text is displayed."""
    code = ord(char)
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def same_id(text: str) -> str:
    """The form ids are compared in: NFC."""
    return text if text.isascii() else unicodedata.normalize("NFC", text)
