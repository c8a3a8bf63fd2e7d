"""Threat: a query's text puts live links in the comment. GitHub links a bare URL, a
``www.`` address and an e-mail address while it renders, and ``#12``, ``owner/repo#12`` and
``GH-12`` in the rendered text, where the Markdown escape ``\\#`` is already gone: a
reviewer clicks through to a page the pull request chose, or a reference to another
repository's issue is posted in our voice.

The comment is rendered with cmark-gfm, GitHub's renderer: the queries read as written,
and nothing in them is a link or a reference.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

from tests.action.project import FIXTURES, REGRESSING_NOTES, fixture_lines
from tests.render.github_html import to_html
from tests.security.harness import Repo

LINKY = {
    "k-005": "run migrations https://evil.example/login and roll back www.evil.example",
    "k-006": "pagination octo/other#12 and #34 GH-56 ask me@evil.example",
}
# GitHub's reference filter, run on the rendered text.
REFERENCE = re.compile(r"(?<![\w/])#\d|[\w.-]+/[\w.-]+#\d|\bGH-\d", re.IGNORECASE)


class _Links(HTMLParser):
    """The links, and the text GitHub's reference filter reads (code blocks it skips)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.hrefs: list[str] = []
        self.text: list[str] = []
        self._code = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "a":
            self.hrefs.append(dict(attrs).get("href") or "")
        self._code += tag in ("code", "pre")

    def handle_endtag(self, tag: str) -> None:
        self._code -= tag in ("code", "pre")

    def handle_data(self, data: str) -> None:
        if not self._code:
            self.text.append(data)


def test_urls_and_references_in_a_query_are_neither_links_nor_references(repo: Repo) -> None:
    fixtures = [(qid, LINKY.get(qid, query), doc) for qid, query, doc in FIXTURES]
    repo.commit({"datasets/keyword.jsonl": fixture_lines(fixtures)}, "queries with links")
    main = repo.establish_baseline()
    repo.branch("pr", main)
    head = repo.commit(REGRESSING_NOTES, "lose the two answers")

    run = repo.pull_request(41, main, head)

    assert run.outputs["verdict"] == "regression", run.log
    for markdown in (run.comment, run.summary):
        page = _Links()
        page.feed(to_html(markdown))
        text = "".join(page.text).replace("\u200b", "")
        assert "https://evil.example/login" in text and "octo/other#12" in text  # shown ...
        assert [h for h in page.hrefs if "evil.example" in h] == []  # ... and not linked
        shown = "".join(page.text)
        assert REFERENCE.search(shown) is None, [m.group() for m in REFERENCE.finditer(shown)]
