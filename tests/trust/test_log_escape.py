"""Text made inert in a GitHub Actions log: the runner obeys no command in it."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from retrieval_eval.trust.log_escape import (
    Relay,
    defuse_lines,
    log_text,
    terminal_text,
    without_terminal_strings,
)
from tests.support.runner_log import obeyed_commands


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("plain name", "plain name"),
        ("evil\n::notice::Passed", "evil\\n::notice::Passed"),
        ("::error::x", "\\::error::x"),
        ("  ::warning::x", "  \\::warning::x"),
        ("a ##[error]b", "a ##\\[error]b"),
        ("bell\x07 esc\x1b[31m", "bell\\x07 esc\\x1b[31m"),
        ("cr\r::error::x", "cr\\r::error::x"),
        ("nel\x85 ls\u2028", "nel\\x85 ls\\u2028"),
        ("tab\tkept", "tab\tkept"),
    ],
)
def test_log_text(text: str, shown: str) -> None:
    assert log_text(text) == shown


@given(st.text())
def test_a_user_string_on_a_log_line_is_never_obeyed(text: str) -> None:
    """Wherever the escaped string lands on a line of ours, at its start included."""
    line = log_text(text)
    assert "\n" not in line and "\r" not in line
    assert obeyed_commands(line) == []
    assert obeyed_commands(f"challenger {line} failed") == []


@given(st.text())
def test_lines_of_our_own_keep_their_breaks_and_obey_nothing(text: str) -> None:
    defused = defuse_lines(text)
    assert obeyed_commands(defused) == []
    assert defused.count("\n") == text.count("\n")


@given(st.text())
def test_relayed_text_is_read_with_commands_stopped(text: str) -> None:
    relay = Relay()
    obeyed = obeyed_commands(relay.wrap(text) + "\n::notice::after")
    assert [command.name for command in obeyed] == ["stop-commands", "resume", "notice"]


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("a\x1b]52;c;ZXZpbA==\x07b", "ab"),
        ("x\x1b]8;;https://evil.example\x1b\\link\x1b]8;;\x1b\\y", "xlinky"),
        ("\x1b]0;title\x07ok", "ok"),
        ("red\x1b[31mX\x1b[0m", "redX"),
        ("c1\x9d0;title\x9cz\x9b2J", "c1z"),
        ("line\nnext\ttab", "line\nnext\ttab"),
        ("bell\x07", "bell\ufffd"),
    ],
)
def test_terminal_text(text: str, shown: str) -> None:
    assert terminal_text(text) == shown


@given(st.text())
def test_terminal_text_leaves_no_escape_sequence(text: str) -> None:
    shown = terminal_text(text)
    assert not set(shown) & {"\x1b", "\x07", *map(chr, range(0x80, 0xA0))}


def test_a_guarded_terminal_keeps_its_colours_and_loses_the_string_sequences() -> None:
    text = "\x1b[1mbold\x1b[0m \x1b]52;c;eA==\x07x \x1b]8;;u\x1b\\l\x1b]8;;\x1b\\ \x9d0;t\x9c"
    assert without_terminal_strings(text) == "\x1b[1mbold\x1b[0m x l "
