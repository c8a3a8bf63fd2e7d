"""User text inside GitHub Markdown: inert, one line, mentions defused."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from retrieval_eval.render.escape import escape_markdown, mermaid_label

ZWSP = "\u200b"


@pytest.mark.parametrize(
    ("text", "escaped"),
    [
        ("a | b", "a \\| b"),
        ("`rm -rf`", "&#96;rm -rf&#96;"),
        ("<script>x</script>", "&lt;script&gt;x&lt;/script&gt;"),
        ("ping @here and @org/team", f"ping @{ZWSP}here and @{ZWSP}org/team"),
        ("@alice", f"@{ZWSP}alice"),
        ("MRR@10 and me@example.org", "MRR@10 and me@example.org"),
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
