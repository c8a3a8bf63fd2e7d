"""TREC text to token spans (tools/trec/text/tokens.py), as trec_eval splits its lines:
any run of spaces and tabs separates fields, blank lines and lines whose first token starts
with ``#`` are skipped, and ``\\n``, ``\\r\\n`` or a lone ``\\r`` ends a line."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from retrieval_eval.errors import InputError
from retrieval_eval.tools.trec.text.tokens import read_blocks

TOKEN = st.text(alphabet="abcXYZ019._-:", min_size=1, max_size=12)
GAP = st.text(alphabet=" \t", min_size=1, max_size=3)
EDGE = st.text(alphabet=" \t", max_size=2)
DATA = st.tuples(EDGE, TOKEN, GAP, TOKEN, GAP, TOKEN, EDGE)
# A line: three fields, a blank line, or a comment.
LINE = st.one_of(
    DATA.map(lambda parts: ("".join(parts), (parts[1], parts[3], parts[5]))),
    EDGE.map(lambda blank: (blank, None)),
    st.tuples(EDGE, TOKEN).map(lambda p: (f"{p[0]}#{p[1]} anything at all", None)),
)


def tokens_read(text: bytes, fields: int = 3) -> list[tuple[int, tuple[str, ...]]]:
    """(line number, tokens) of every data line, as read_blocks gives them."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "run"
        path.write_bytes(text)
        found = []
        for block in read_blocks(path, fields, extra_fields_allowed=False, layout="a b c"):
            spans = [block.span(field) for field in range(fields)]
            for row in range(block.lines):
                words = tuple(
                    block.buffer[int(starts[row]) : int(ends[row])].tobytes().decode()
                    for starts, ends in spans
                )
                found.append((int(block.line_numbers[row]), words))
        return found


@given(
    st.lists(LINE, max_size=30),
    st.sampled_from(["\n", "\r\n", "\r"]),
    st.booleans(),
    st.booleans(),
)
def test_every_data_line_is_read_with_its_line_number(
    lines: list[tuple[str, tuple[str, ...] | None]], ending: str, bom: bool, last_ending: bool
) -> None:
    text = ending.join(line for line, _ in lines) + (ending if last_ending else "")
    raw = (b"\xef\xbb\xbf" if bom else b"") + text.encode()
    expected = [(number, words) for number, (_, words) in enumerate(lines, 1) if words]
    assert tokens_read(raw) == expected


def test_the_common_layout_and_an_irregular_one_read_alike() -> None:
    regular = b"q1 Q0 d1\nq1 Q0 d2\n"
    irregular = b"  q1\tQ0   d1\r\n\r\n# a note\r\nq1 Q0 d2"
    assert tokens_read(regular) == [(1, ("q1", "Q0", "d1")), (2, ("q1", "Q0", "d2"))]
    assert tokens_read(irregular) == [(1, ("q1", "Q0", "d1")), (4, ("q1", "Q0", "d2"))]


@pytest.mark.parametrize("line", ["q1 Q0", "q1 Q0 d1 extra"])
def test_a_line_with_other_than_its_fields_names_its_number(line: str) -> None:
    with pytest.raises(
        InputError, match=r"expected 3 whitespace-separated fields \(a b c\)"
    ) as bad:
        tokens_read(f"q Q0 d\n\n{line}\n".encode())
    assert bad.value.line == 3


def test_utf16_is_refused() -> None:
    with pytest.raises(InputError):
        tokens_read("q Q0 d\n".encode("utf-16"))
