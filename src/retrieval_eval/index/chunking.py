"""Documents → chunks: Markdown sections, capped in tokens, with overlap.

Why chunk at all: the embedding model reads at most 256 word pieces, so a long
note embedded whole is silently truncated, and a 5 MB document must never become
one embedding call. Why by heading: a note's sections are its natural units, and
the heading path (``Trip to Lisbon > Budget``) tells the model — and the judge
reading the hit — what the section is about.

Rules (docs/retrievers.md repeats them for users):

- ATX headings (``#`` … ``######`` followed by a space) outside fenced code
  blocks start a section; the section path is the stack of enclosing headings.
  Plain text (JSONL, BEIR) has no headings and is one section.
- Every chunk starts with a context line: the section path, preceded by the
  document title unless the title is already the first heading or the text
  already begins with it (BEIR collections such as Cranfield repeat it). A
  document with a title and no text is its title, once.
- A section longer than the cap is cut into windows of at most ``max_tokens``
  tokens (context line included) that overlap by ``overlap`` tokens; cuts land on
  word boundaries when one lies in the window's second half.
- "Token" is whatever ``spans`` says: whitespace-separated words by default, the
  embedding model's own word pieces for the dense retriever.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import overload

from retrieval_eval.load.documents import Corpus, Document

TokenSpans = Callable[[str], Sequence[tuple[int, int]]]
"""Character spans ``(start, end)`` of the tokens of a text, in order."""

SECTION_SEPARATOR = " > "

_HEADING = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_WORD = re.compile(r"\S+")


@dataclass(frozen=True)
class Chunk:
    doc_id: str
    ordinal: int  # position within its document, from 0
    section: str  # the context line: "Trip to Lisbon > Budget"; "" when there is none
    text: str  # what is indexed and handed back as the hit's text

    @property
    def id(self) -> str:
        return f"{self.doc_id}#{self.ordinal}"


@dataclass(frozen=True)
class Section:
    path: tuple[str, ...]
    body: str


class WordSpans(Sequence[tuple[int, int]]):
    """The spans of a text's whitespace-separated words, counted before they are found.

    Chunking mostly asks how many tokens a text has (a section within its budget is one
    chunk, a context line only shortens the budget); ``str.split`` counts the same words
    as ``\\S+`` (both separate at exactly the characters ``str.isspace`` accepts) in a
    seventh of the time it takes to collect their spans, which are found only when a
    section must be cut into windows. On Cranfield's 1,398 documents chunking went from
    about 48 to 19 CPU-milliseconds.
    """

    __slots__ = ("_count", "_spans", "_text")

    def __init__(self, text: str):
        self._text = text
        self._count = len(text.split())
        self._spans: list[tuple[int, int]] | None = None

    def __len__(self) -> int:
        return self._count

    @overload
    def __getitem__(self, index: int) -> tuple[int, int]: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[tuple[int, int]]: ...

    def __getitem__(self, index: int | slice) -> tuple[int, int] | Sequence[tuple[int, int]]:
        if self._spans is None:
            self._spans = [match.span() for match in _WORD.finditer(self._text)]
        return self._spans[index]


def word_spans(text: str) -> Sequence[tuple[int, int]]:
    return WordSpans(text)


def split_sections(text: str) -> list[Section]:
    """Split Markdown at ATX headings; a heading line itself is not body text."""
    sections: list[Section] = []
    stack: list[tuple[int, str]] = []
    body: list[str] = []
    fence: str | None = None

    def flush() -> None:
        joined = "".join(body).strip()
        if joined:
            sections.append(Section(tuple(title for _, title in stack), joined))
        body.clear()

    for line in text.splitlines(keepends=True):
        fence_match = _FENCE.match(line)
        if fence_match is not None:
            marker = fence_match.group(1)
            if fence is None:
                fence = marker
            elif marker[0] == fence[0] and len(marker) >= len(fence):
                fence = None
        heading = _HEADING.match(line.rstrip("\r\n")) if fence is None else None
        if heading is None:
            body.append(line)
            continue
        flush()
        level = len(heading.group(1))
        while stack and stack[-1][0] >= level:
            stack.pop()
        stack.append((level, (heading.group(2) or "").strip()))
    flush()
    return sections


def chunk_document(
    document: Document, *, max_tokens: int, overlap: int, spans: TokenSpans = word_spans
) -> list[Chunk]:
    if not 0 <= overlap < max_tokens // 2:
        raise ValueError(f"overlap {overlap} must be in [0, {max_tokens // 2})")
    sections = split_sections(document.text)
    title_only = False
    if not sections:
        # A document made only of headings is still findable by them, and one with a
        # title but no text by its title, indexed once (not as its context line too).
        heading_only = document.text.strip()
        title_only = not heading_only and bool(document.title.strip())
        body = heading_only or document.title.strip()
        sections = [Section((), body)] if body else []
    with_title = not title_only and _needs_title(document, sections)
    chunks: list[Chunk] = []
    for section in sections:
        context = SECTION_SEPARATOR.join(
            part for part in ((document.title,) if with_title else ()) + section.path if part
        )
        budget = max(max_tokens - len(spans(context)), max_tokens // 2) if context else max_tokens
        for window in _windows(section.body, spans(section.body), budget, overlap):
            text = f"{context}\n{window}" if context else window
            chunks.append(Chunk(document.id, len(chunks), context, text))
    return chunks


def chunk_corpus(
    corpus: Corpus, *, max_tokens: int, overlap: int, spans: TokenSpans = word_spans
) -> list[Chunk]:
    return [
        chunk
        for document in corpus.documents
        for chunk in chunk_document(document, max_tokens=max_tokens, overlap=overlap, spans=spans)
    ]


def _needs_title(document: Document, sections: list[Section]) -> bool:
    title = " ".join(document.title.split()).lower()
    if not title:
        return False
    if sections and sections[0].path and sections[0].path[0].lower() == title:
        return False
    return not " ".join(document.text[: len(document.title) * 2].split()).lower().startswith(title)


def _windows(
    text: str, token_spans: Sequence[tuple[int, int]], budget: int, overlap: int
) -> Iterator[str]:
    count = len(token_spans)
    if count <= budget:
        yield text
        return

    def word_start(index: int) -> bool:
        start = token_spans[index][0]
        return index == 0 or start > token_spans[index - 1][1]

    def snap_back(index: int, floor: int) -> int:
        """The nearest word start at or before ``index`` but after ``floor``, else ``index``."""
        for candidate in range(index, floor, -1):
            if word_start(candidate):
                return candidate
        return index

    first = 0
    while True:
        end = first + budget
        if end >= count:
            yield text[token_spans[first][0] : token_spans[-1][1]]
            return
        end = snap_back(end, first + budget // 2)
        yield text[token_spans[first][0] : token_spans[end - 1][1]]
        first = snap_back(end - overlap, first) if overlap else end
