"""Render Markdown the way GitHub does (cmark-gfm) and read back what a reviewer sees."""

from __future__ import annotations

from dataclasses import dataclass, field
from html.parser import HTMLParser

import cmarkgfm
from cmarkgfm.cmark import Options


def to_html(markdown: str) -> str:
    # GitHub keeps raw HTML like <details> (then sanitizes); UNSAFE renders it the same way.
    html: str = cmarkgfm.github_flavored_markdown_to_html(
        markdown, options=Options.CMARK_OPT_UNSAFE
    )
    return html


@dataclass
class Page:
    tables: list[list[list[str]]] = field(default_factory=list)  # table -> row -> cell text
    summaries: list[str] = field(default_factory=list)
    # Table rows (header rows included) a reviewer sees without opening a <details>.
    visible_rows: int = 0
    tags: set[str] = field(default_factory=set)
    text: str = ""


class _Reader(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.page = Page()
        self._cell: list[str] | None = None
        self._row: list[str] | None = None
        self._summary: list[str] | None = None
        self._text: list[str] = []
        self._details_depth = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.page.tags.add(tag)
        if tag == "table":
            self.page.tables.append([])
        elif tag == "details":
            self._details_depth += 1
        elif tag == "tr":
            self._row = []
            if not self._details_depth:
                self.page.visible_rows += 1
        elif tag in ("td", "th"):
            self._cell = []
        elif tag == "summary":
            self._summary = []

    def handle_endtag(self, tag: str) -> None:
        if tag == "details":
            self._details_depth -= 1
        elif tag in ("td", "th") and self._cell is not None and self._row is not None:
            self._row.append("".join(self._cell).strip())
            self._cell = None
        elif tag == "tr" and self._row is not None:
            self.page.tables[-1].append(self._row)
            self._row = None
        elif tag == "summary" and self._summary is not None:
            self.page.summaries.append("".join(self._summary))
            self._summary = None

    def handle_data(self, data: str) -> None:
        self._text.append(data)
        if self._cell is not None:
            self._cell.append(data)
        if self._summary is not None:
            self._summary.append(data)

    def close(self) -> None:
        super().close()
        self.page.text = "".join(self._text)


def read(markdown: str) -> Page:
    reader = _Reader()
    reader.feed(to_html(markdown))
    reader.close()
    return reader.page


def table_with_header(page: Page, first_header: str) -> list[list[str]]:
    """The first table whose header row starts with ``first_header``."""
    for table in page.tables:
        if table and table[0] and table[0][0] == first_header:
            return table
    raise AssertionError(
        f"no table headed {first_header!r}; headers: {[t[0] for t in page.tables if t]}"
    )
