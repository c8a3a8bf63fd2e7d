"""Make user text (queries, document ids, tags) inert inside GitHub Markdown.

Query text comes from whoever edits a dataset, and it lands in a PR comment:
a ``|`` must not split a table cell, a backtick or ``*`` must not start
formatting, HTML must not become markup, and ``@team`` must not notify anyone.
"""

from __future__ import annotations

import re

from retrieval_eval.load.invisible import DEFAULT_IGNORABLE, shown_code_point
from retrieval_eval.trust.redaction import clean

# Characters with a Markdown meaning in inline text and table cells; a backslash
# makes each literal (GFM: any ASCII punctuation can be backslash-escaped).
_BACKSLASHED = set("\\*_[]~|#!")
_HTML = {"<": "&lt;", ">": "&gt;", "&": "&amp;", '"': "&quot;", "`": "&#96;"}
# A zero-width space after "@" breaks GitHub's mention (and team mention) pattern
# while the text still reads the same. An "@" inside a word (``MRR@10``,
# ``me@example.org``) is not a mention and is left alone; a word there means ASCII
# letters, digits and "_", as in GitHub's pattern: after "é" or "日", "@name" notifies.
_ZERO_WIDTH_SPACE = "\u200b"
# Bidirectional embeddings, overrides and isolates reorder the text after them, so a
# name reads as something it is not ("Trojan Source"); control characters mean nothing
# in Markdown or a status. Each is shown as U+FFFD: the reader sees something is there.
_UNSHOWABLE = re.compile("[\u202a-\u202e\u2066-\u2069\x00-\x1f\x7f-\x9f]")
# The other code points a renderer shows as nothing (a word joiner, a zero-width space):
# two ids differing only by one read the same, so each is shown as its escape (``\u2060``).
_IGNORABLE = re.compile(f"[{DEFAULT_IGNORABLE}]")


def visible(text: str) -> str:
    """``text`` with every secret masked (before any escaping changes how one is spelt),
    without direction overrides or control characters (each becomes U+FFFD), and with
    every other invisible code point shown as its escape."""
    shown = _UNSHOWABLE.sub("\ufffd", clean(text))
    return shown if shown.isascii() else _IGNORABLE.sub(_escape_code_point, shown)


def _escape_code_point(match: re.Match[str]) -> str:
    return shown_code_point(match.group())


def escape_markdown(text: object, *, max_len: int | None = 200) -> str:
    """Inline-safe text: single line, no markup, no mentions, at most ``max_len`` characters."""
    value = visible(" ".join(str(text).split()))  # newlines would end a table row
    if max_len is not None and len(value) > max_len:
        value = value[: max_len - 1] + "…"
    out: list[str] = []
    previous = ""
    for char in value:
        if char in _HTML:
            out.append(_HTML[char])
        elif char in _BACKSLASHED:
            out.append("\\" + char)
        elif char == "@" and not (previous.isascii() and (previous.isalnum() or previous == "_")):
            out.append("@" + _ZERO_WIDTH_SPACE)
        else:
            out.append(char)
        previous = char
    return _unlinked("".join(out))


# Links GitHub makes from plain text, each broken so the text still reads the same. cmark-gfm
# (GitHub's renderer) links `scheme://…` and `www.…` while it parses: an entity for the ":"
# or the "." it looks for is decoded only after, so it reads as before and links nothing.
# It links `name@domain.tld` in the parsed text, and GitHub then links `#123`,
# `owner/repo#123` and `GH-123` in the rendered text, where no Markdown escape is left (`\#`
# renders as `#`): a zero-width space after the "@", the `#` or the `GH-` breaks each, as
# after the "@" of a mention.
_AUTOLINKS = re.compile(
    r"(?P<scheme>:(?=//))"
    r"|(?P<www>[wW]{3})\."
    r"|(?<=[\w.+-])@(?P<domain>(?!\u200b)(?=[^\s@]*\.))"
    r"|(?P<issue>\\#)(?=\d)"
    r"|\b(?P<gh>[gG][hH]-)(?=\d)"
)


def _unlinked(text: str) -> str:
    # Most text has none of them: it is not scanned (a report escapes every cell).
    lowered = text.lower()
    if not ("://" in text or "www." in lowered or "@" in text or "\\#" in text or "gh-" in lowered):
        return text
    return _AUTOLINKS.sub(_unlink, text)


def _unlink(match: re.Match[str]) -> str:
    if match.group("scheme") is not None:
        return "&#58;"
    if match.group("www") is not None:
        return match.group("www") + "&#46;"
    if match.group("domain") is not None:
        return "@" + _ZERO_WIDTH_SPACE
    if match.group("issue") is not None:
        return "\\#" + _ZERO_WIDTH_SPACE
    return match.group("gh") + _ZERO_WIDTH_SPACE


# Inside a ```mermaid block Markdown escapes mean nothing: a label is a quoted Mermaid
# string, which a `"` would end, and a backtick run could close the fence. A label keeps
# letters, digits and a few harmless punctuation marks; anything else becomes "_".
_MERMAID_UNSAFE = re.compile(r"[^\w .@/()+-]")


def mermaid_label(text: object, *, max_len: int = 40) -> str:
    """``text`` as the inside of a quoted Mermaid string (a chart's title or axis label)."""
    value = _MERMAID_UNSAFE.sub("_", visible(" ".join(str(text).split())))
    return value if len(value) <= max_len else value[: max_len - 1] + "…"
