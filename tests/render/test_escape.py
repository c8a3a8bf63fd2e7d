"""User text inside GitHub Markdown: inert, one line, mentions defused."""

from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest
from hypothesis import given
from hypothesis import strategies as st

from retrieval_eval.render.escape import escape_markdown, mermaid_label, visible
from retrieval_eval.trust.redaction import MASK, register_secret
from tests.render.github_html import to_html

ZWSP = "\u200b"


@pytest.mark.parametrize(
    ("text", "escaped"),
    [
        ("a | b", "a \\| b"),
        ("`rm -rf`", "&#96;rm -rf&#96;"),
        ("<script>x</script>", "&lt;script&gt;x&lt;/script&gt;"),
        ("ping @here and @org/team", f"ping @{ZWSP}here and @{ZWSP}org/team"),
        ("@alice", f"@{ZWSP}alice"),
        ("MRR@10 and me@example.org", f"MRR@10 and me@{ZWSP}example.org"),
        ("see https://x.example/a", "see https&#58;//x.example/a"),
        ("www.x.example", "www&#46;x.example"),
        ("octo/notes#12 and GH-3", f"octo/notes\\#{ZWSP}12 and GH-{ZWSP}3"),
        ("C# and #tag", "C\\# and \\#tag"),
        ("**bold** _it_ [l](u) ~x~", "\\*\\*bold\\*\\* \\_it\\_ \\[l\\](u) \\~x\\~"),
        ("line one\nline two\r\n", "line one line two"),
        ("back\\slash", "back\\\\slash"),
        ("Tom & Jerry", "Tom &amp; Jerry"),
    ],
)
def test_escaping(text: str, escaped: str) -> None:
    assert escape_markdown(text) == escaped


def test_long_text_is_shortened_with_an_ellipsis() -> None:
    assert escape_markdown("x" * 300, max_len=10) == "x" * 9 + "…"
    assert escape_markdown("x" * 300, max_len=None) == "x" * 300


@given(st.text(max_size=80))
def test_a_mermaid_label_can_neither_end_its_string_nor_its_fence(text: str) -> None:
    label = mermaid_label(text)

    assert '"' not in label and "`" not in label and "\n" not in label
    assert len(label) <= 40
    assert mermaid_label("semantic.jsonl") == "semantic.jsonl"


# What GitHub links in rendered text (its issue and commit reference filter runs on the HTML
# cmark-gfm gives): `#123`, `owner/repo#123`, `GH-123`.
_REFERENCE = re.compile(r"(?<![\w/])#\d|[\w.-]+/[\w.-]+#\d|\bGH-\d", re.IGNORECASE)


class _Rendered(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: set[str] = set()
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.add(tag)

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def _render(markdown: str) -> _Rendered:
    page = _Rendered()
    page.feed(to_html(markdown))
    page.close()
    return page


_LINKY = st.lists(
    st.sampled_from([*"aw.:/@#-GHx19 _", "www.", "http://", "https://", "GH-", "a@b.co"]),
    max_size=20,
).map("".join)


@given(st.one_of(st.text(max_size=60), _LINKY))
def test_query_text_renders_as_no_link_and_no_reference(text: str) -> None:
    """Rendered by cmark-gfm, as GitHub renders a comment: no link, no markup; and no text
    left that GitHub's reference filter would link after rendering."""
    page = _render(f"| q |\n| --- |\n| {escape_markdown(text)} |\n")
    assert not page.tags - {"table", "thead", "tbody", "tr", "th", "td"}, to_html(
        escape_markdown(text)
    )
    assert _REFERENCE.search("".join(page.text)) is None


@pytest.mark.parametrize(
    "text",
    ["see https://evil.example/x", "www.evil.example", "mail me@evil.example", "octo/notes#1"],
)
def test_what_a_reviewer_reads_is_the_text_as_written_apart_from_zero_width_spaces(
    text: str,
) -> None:
    shown = "".join(_render(escape_markdown(text)).text).strip()
    assert shown.replace(ZWSP, "") == text


def test_a_secret_is_masked_before_escaping_changes_its_spelling() -> None:
    key = "sk-ant-api03-Rt4_SECRET_kEy_escape"
    register_secret(key)
    assert escape_markdown(f"key {key}") == f"key {MASK.replace('*', chr(92) + '*')}"
    assert visible(f"[{key}]") == f"[{MASK}]"


def test_an_invisible_code_point_is_shown_as_its_escape() -> None:
    assert escape_markdown("k-005\u2060") == "k-005\\\\u2060"
    assert "\\u2060" in "".join(_render(escape_markdown("k-005\u2060")).text)
