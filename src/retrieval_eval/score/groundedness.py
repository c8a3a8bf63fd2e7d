"""Keyword groundedness: did the retrieved text contain what an answer needs?

Defined as |expected keywords found in the retrieved
text| / |expected keywords|, matched case-insensitively as substrings. Keywords
are compared case-folded and de-duplicated; blank ones are ignored.

With no expected keywords the value is 1.0 (nothing was missing). That makes
a "no match" case look perfect even when a broken filter
returned unrelated text, so expect-empty fixtures must be judged by their own
assertion (results must be empty), never by this number.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

# Why a dataset's groundedness is left out, in the log, report.md and the comment.
NEEDS_TEXT = (
    'the retriever\'s hits carry no text (a factory returning `Hit(id, score, "")`), and '
    "groundedness looks for the expected keywords in that text; return each hit's text "
    "(the best-matching chunk, or the document) to measure it"
)


def hits_lack_text(hit_texts: Iterable[Sequence[str]]) -> bool:
    """True when the queries found documents but not one hit came with text: every
    keyword would then read as missing, and groundedness would be 0 for a reason that
    has nothing to do with retrieval."""
    texts = [text for hits in hit_texts for text in hits]
    return bool(texts) and not any(text.strip() for text in texts)


def groundedness(expected_keywords: Sequence[str], texts: Sequence[str]) -> float:
    wanted = {keyword.strip().casefold() for keyword in expected_keywords if keyword.strip()}
    if not wanted:
        return 1.0
    haystack = "\n".join(text.casefold() for text in texts)
    found = sum(1 for keyword in wanted if keyword in haystack)
    return found / len(wanted)
