"""Text made inert in a GitHub Actions log: the runner obeys no command in it."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from retrieval_eval.trust.log_escape import Relay, defuse_lines, log_text
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
