"""A note's Markdown as the plain text a reviewer reads: no fences, tags or link syntax.

``review`` shows a fixture's source passage in a few hundred characters; flattened raw
Markdown spends them on code fences, HTML and URLs. This is a careful small function rather
than markdown-it-py: that parser is installed only as rich's dependency, and declaring it
changes the hashed runtime lock, which names the container's base image, for a preview.
It keeps every word a reader sees in a rendered note (code included) and drops the markup.
"""

from __future__ import annotations

import html
import re

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_COMMENT = re.compile(r"<!--.*?-->", re.S)
_TAG = re.compile(r"</?[A-Za-z][\w:-]*(?:\s[^<>]*)?/?>")
_IMAGE = re.compile(r"!\[([^\]]*)\]\([^)]*\)")
_LINK = re.compile(r"\[([^\]]+)\](?:\([^)]*\)|\[[^\]]*\])")
_AUTOLINK = re.compile(r"<((?:https?|mailto):[^>\s]+)>")
_CODE_SPAN = re.compile(r"(`+)(.+?)\1")
_STRONG = re.compile(r"(\*\*|__)(?=\S)(.+?)(?<=\S)\1")
_EMPHASIS = re.compile(r"(?<![\w*])\*(?=\S)([^*]+?)(?<=\S)\*(?![\w*])")
_UNDERSCORE = re.compile(r"(?<!\w)_(?=\S)([^_]+?)(?<=\S)_(?!\w)")
_STRIKE = re.compile(r"~~(?=\S)(.+?)(?<=\S)~~")
_HEADING = re.compile(r"^ {0,3}#{1,6}(?:\s+|$)(.*?)(?:\s+#+\s*)?$")
_RULE = re.compile(r"^ {0,3}([-*_])(?:\s*\1){2,}\s*$")
_BULLET = re.compile(r"^(\s*)(?:[-*+]|\d{1,9}[.)])\s+(?:\[[ xX]\]\s+)?")
_QUOTE = re.compile(r"^ {0,3}(?:>\s?)+")
_TABLE_RULE = re.compile(r"^\s*\|?\s*:?-{2,}:?\s*(?:\|\s*:?-{2,}:?\s*)*\|?\s*$")
_REFERENCE = re.compile(r"^ {0,3}\[[^\]]+\]:\s*\S+")


def plain_text(markdown: str) -> str:
    """Paragraphs of plain text, one per line, in the note's order."""
    paragraphs: list[str] = []
    current: list[str] = []
    fence: str | None = None

    def close() -> None:
        if current:
            paragraphs.append(" ".join(current))
            current.clear()

    for raw in _COMMENT.sub("", markdown).splitlines():
        opened = _FENCE.match(raw)
        if fence is not None:
            if opened and opened.group(1)[0] == fence[0] and len(opened.group(1)) >= len(fence):
                fence = None
                close()
            elif raw.strip():
                current.append(raw.strip())
            continue
        if opened:
            close()
            fence = opened.group(1)
            continue
        line = raw.rstrip()
        if not line.strip() or _RULE.match(line) or _TABLE_RULE.match(line):
            close()
            continue
        if _REFERENCE.match(line):
            continue
        heading = _HEADING.match(line)
        if heading:
            close()
            paragraphs.append(_inline(heading.group(1)))
            continue
        line = _QUOTE.sub("", line)
        bullet = _BULLET.match(line)
        if bullet:
            close()
            line = "• " + line[bullet.end() :]
        if line.strip().startswith("|"):  # a table row: its cells, on a line of its own
            close()
            cells = [_inline(cell) for cell in line.strip().strip("|").split("|")]
            paragraphs.append(" · ".join(cell for cell in cells if cell))
            continue
        text = _inline(line.strip())
        if text:
            current.append(text)
    close()
    return "\n".join(p for p in paragraphs if p.strip())


def _inline(text: str) -> str:
    spans: list[str] = []

    def keep(match: re.Match[str]) -> str:  # code is shown as it is written
        spans.append(match.group(2).strip())
        return f"\0{len(spans) - 1}\0"

    text = _CODE_SPAN.sub(keep, text)
    text = _IMAGE.sub(r"\1", text)
    text = _LINK.sub(r"\1", text)
    text = _AUTOLINK.sub(r"\1", text)
    text = _TAG.sub("", text)
    for pattern in (_STRONG, _STRIKE):
        text = pattern.sub(lambda m: m.group(2), text)
    text = _EMPHASIS.sub(r"\1", text)
    text = _UNDERSCORE.sub(r"\1", text)
    text = re.sub(r"\0(\d+)\0", lambda m: spans[int(m.group(1))], text)
    return " ".join(html.unescape(text).split())
