"""Make text inert where it is shown: a GitHub Actions log, where some lines are commands to
the runner, and a terminal, which obeys escape sequences.

The runner reads every line a step writes (stdout and stderr) and obeys two forms of
workflow command: a line whose text, leading whitespace trimmed, starts with ``::``
(``::error::``, ``::stop-commands::``, ``::add-mask::``) and, anywhere in a line, the
older ``##[command]`` form. It splits lines at ``\\n`` and at ``\\r``. A name or a
message from a pull request that carries a line break followed by ``::notice…``, or a
``##[error]`` anywhere, would otherwise speak to the runner in our voice.

``log_text`` is the one escaping for a user string written into a log line: it keeps the
text on one line, shows every control character as an escape (``\\n``, ``\\x1b``) and
defuses both command forms. ``defuse_line`` is the part that applies to a line of our
own (a traceback, indented JSON): line breaks stay, commands are defused.
``Relay`` wraps a block of text we pass on as it was written (a retriever's output) in
``::stop-commands::TOKEN`` … ``::TOKEN::`` with a fresh random token, GitHub's own
mechanism for printing untrusted text.

``terminal_text`` is what a terminal is shown of a dataset's or a corpus's text: no escape
sequence (OSC 52 writes the clipboard, OSC 8 hides a link behind other text, OSC 0 sets the
window title; CSI moves the cursor and clears the screen), and no other control character.
``without_terminal_strings`` removes only the string sequences (OSC, DCS, SOS, PM, APC) and
their 8-bit forms, none of which a command line tool of ours writes: what a guarded
terminal stream can strip from everything, its own colours and progress bars kept.
"""

from __future__ import annotations

import re
import secrets

# C0 and C1 control characters (tab excepted: harmless and common), Unicode's line and
# paragraph separators, and the direction overrides and isolates (which make a line read
# as something it is not).
_CONTROL = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
_NAMED = {"\n": "\\n", "\r": "\\r"}
# The runner's two command forms: `::` opening a line (after leading whitespace), and
# `##[` anywhere. A backslash before the `::` and inside the `##[` breaks each; the reader
# still sees what was written.
_LEADING_COMMAND = re.compile(r"^(\s*)::")
_V1_COMMAND = "##["
_V1_DEFUSED = "##\\["
_LINE_BREAK = re.compile(r"(\r\n|\r|\n)")


def _shown(match: re.Match[str]) -> str:
    char = match.group()
    if char in _NAMED:
        return _NAMED[char]
    code = ord(char)
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def defuse_line(line: str) -> str:
    """One line (no line break in it) that the runner cannot take for a command."""
    return _LEADING_COMMAND.sub(r"\1\\::", line).replace(_V1_COMMAND, _V1_DEFUSED)


def log_text(text: object) -> str:
    """``text`` as inert log text on one line: control characters (line breaks included)
    shown as escapes, workflow commands defused."""
    return defuse_line(_CONTROL.sub(_shown, str(text)))


def defuse_lines(text: str) -> str:
    """Text of our own, several lines: each line defused, the line breaks kept."""
    parts = _LINE_BREAK.split(text)
    # split keeps the separators at the odd positions; the lines are at the even ones
    return "".join(part if i % 2 else defuse_line(part) for i, part in enumerate(parts))


class Relay:
    """The commands that stop and resume the runner's reading of workflow commands around
    text passed on as it was written. The token is random, so the text cannot resume them."""

    def __init__(self) -> None:
        self.token = secrets.token_hex(16)

    @property
    def stop(self) -> str:
        return f"::stop-commands::{self.token}"

    @property
    def resume(self) -> str:
        return f"::{self.token}::"

    def wrap(self, text: str) -> str:
        """``text``'s lines between the stop and the resume (each line on its own; a line
        equal to the resume command cannot occur: the token is fresh and never shown first)."""
        body = text.replace(self.resume, log_text(self.resume))
        return f"{self.stop}\n{body.rstrip(chr(10))}\n{self.resume}"


# The string sequences: OSC `ESC ]`, DCS `ESC P`, SOS `ESC X`, PM `ESC ^`, APC `ESC _` and
# their 8-bit forms, each up to BEL or the string terminator (ESC \ or U+009C), or the end.
_STRING_SEQUENCE = re.compile(
    r"(?:\x1b[\]PX^_]|[\x9d\x90\x98\x9e\x9f]).*?(?:\x07|\x1b\\|\x9c|$)", re.DOTALL
)
_TERMINAL_SEQUENCE = re.compile(
    _STRING_SEQUENCE.pattern
    + r"|\x1b\[[0-?]*[ -/]*[@-~]?"  # CSI
    + r"|\x9b[0-?]*[ -/]*[@-~]?"  # 8-bit CSI
    + r"|\x1b[ -/]*[0-~]?",  # the other escapes (charset, keypad, reset, ...)
    re.DOTALL,
)
_INTRODUCERS = "\x1b\x9b\x9d\x90\x98\x9e\x9f"
_TERMINAL_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def terminal_text(text: object) -> str:
    """``text`` as a terminal shows it and obeys nothing in it: every escape sequence
    removed, every other control character (line breaks and tabs kept) shown as U+FFFD."""
    value = str(text)
    if any(char in value for char in _INTRODUCERS):
        value = _TERMINAL_SEQUENCE.sub("", value)
    return _TERMINAL_CONTROL.sub("\ufffd", value)


def without_terminal_strings(text: str) -> str:
    """``text`` without OSC, DCS, SOS, PM and APC sequences (colours and cursor moves kept)."""
    if not any(char in text for char in "\x1b\x9d\x90\x98\x9e\x9f"):
        return text
    return _STRING_SEQUENCE.sub("", text)
