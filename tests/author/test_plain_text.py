"""A note's Markdown as the plain text `review` shows (its own test of the source passage,
through the console script, is in test_review.py)."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from retrieval_eval.author.plain_text import plain_text


def test_markup_goes_and_every_word_stays() -> None:
    markdown = (
        "# Title\n\nSome **bold** and _em_ text with `code` and a [link](https://x.y).\n"
        "<div>inside</div>\n\n```py\nprint(1)\n```\n\n- one\n- two\n\n| a | b |\n|---|---|\n"
        "| 1 | 2 |\n\n> quoted &amp; done\n\n---\nsnake_case_name stays"
    )
    assert plain_text(markdown).splitlines() == [
        "Title",
        "Some bold and em text with code and a link. inside",
        "print(1)",
        "• one",
        "• two",
        "a · b",
        "1 · 2",
        "quoted & done",
        "snake_case_name stays",
    ]


@given(st.text(max_size=200))
def test_plain_text_leaves_no_fence_or_tag(markdown: str) -> None:
    text = plain_text(markdown)
    assert "```" not in text or "```" in markdown.replace("```", "", 1)
    assert not re.search(r"<(?:div|b|span)\b[^<>]*>", text)


@given(st.lists(st.from_regex(r"[A-Za-z0-9 ,.]{1,40}", fullmatch=True), max_size=5))
def test_plain_words_come_through_as_they_are(lines: list[str]) -> None:
    markdown = "\n\n".join(lines)
    words = " ".join(markdown.split())
    assert " ".join(plain_text(markdown).split()) == words
