"""The one redaction choke point: every byte we write or post passes through ``clean``.

Secrets are registered once at the edge (the GitHub token, the Actions runtime
tokens, the judge's key, whatever the user lists). ``clean`` replaces each of
them in every form a leak is likely to take: the raw value, URL-encoded,
JSON-escaped, and base64 at each of the three byte alignments (which is how a
token appears inside an HTTP basic-auth header such as
``base64("x-access-token:" + token)``). It also replaces lone surrogates, which
cannot be encoded as UTF-8 and would otherwise crash the write that follows.

The sinks that call it: ``fileio`` (report files, baselines, fork hand-over
files), ``runner_files`` (step summary, outputs, workflow commands), the
GitHub client (comment bodies, status descriptions), and the process's own
stdout/stderr once ``guard_standard_streams`` has run.
"""

from __future__ import annotations

import base64
import json
import re
import sys
from collections.abc import Iterable
from typing import TextIO
from urllib.parse import quote, quote_plus

from retrieval_eval.trust.log_escape import defuse_line, without_terminal_strings

MASK = "***"
# Shorter values would mask ordinary words; GitHub and Anthropic secrets are far longer.
MIN_SECRET_CHARS = 6
_LONE_SURROGATE = re.compile(r"[\ud800-\udfff]")

_forms: set[str] = set()
_ordered: list[str] = []  # longest first, so a form containing another is replaced whole


def secret_forms(secret: str) -> set[str]:
    """Every encoding of ``secret`` that ``clean`` replaces."""
    if len(secret) < MIN_SECRET_CHARS:
        return set()
    forms = {secret, quote(secret, safe=""), quote_plus(secret), json.dumps(secret)[1:-1]}
    raw = secret.encode("utf-8", errors="surrogatepass")
    for shift in range(3):
        encoded = base64.b64encode(b"\0" * shift + raw).decode("ascii")
        # Only the characters made entirely of the secret's bits: the same in any message.
        start = -(-8 * shift // 6)
        end = (8 * (shift + len(raw))) // 6
        middle = encoded[start:end]
        forms.add(middle)
        forms.add(middle.replace("+", "-").replace("/", "_"))  # base64url
    return {form for form in forms if len(form) >= MIN_SECRET_CHARS}


def register_secret(secret: str | None) -> None:
    if not secret:
        return
    new = secret_forms(secret) - _forms
    if new:
        _forms.update(new)
        _ordered[:] = sorted(_forms, key=len, reverse=True)


def registered_forms() -> list[str]:
    return list(_ordered)


def clean(text: str) -> str:
    """``text`` with every registered secret masked and every lone surrogate replaced."""
    text = _masked(text)
    # A lone surrogate is neither ASCII (known without reading the text) nor encodable as
    # UTF-8: the pattern, slow on a report of 100 MB, only reads a text that fails both.
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return _LONE_SURROGATE.sub("\ufffd", text)
    return text


def clean_utf8(text: str) -> bytes:
    """``clean(text)`` encoded as UTF-8, the text encoded once (a report is 100 MB)."""
    text = _masked(text)
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return _LONE_SURROGATE.sub("\ufffd", text).encode("utf-8")


def clean_utf8_bytes(data: bytes) -> bytes:
    """UTF-8 ``data`` (which has no lone surrogates: they cannot be encoded) with every
    registered secret masked, as ``clean`` masks a text."""
    for form in _ordered:
        raw = form.encode("utf-8", errors="surrogatepass")
        if raw in data:
            data = data.replace(raw, MASK.encode("ascii"))
    return data


def _masked(text: str) -> str:
    for form in _ordered:
        if form in text:
            text = text.replace(form, MASK)
    return text


_announced: set[str] = set()


def announce_masks(stream: TextIO | None = None) -> None:
    """``::add-mask::`` for each form not yet announced, so the runner hides it in the log
    even if it slips by some other way.

    Written to the real stdout: through ``clean`` the command would mask itself.
    """
    out = stream if stream is not None else _unwrapped(sys.stdout)
    for form in _ordered:
        if form in _announced:
            continue
        _announced.add(form)
        escaped = form.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
        out.write(f"::add-mask::{escaped}\n")
    out.flush()


def _unwrapped(stream: TextIO) -> TextIO:
    return stream._inner if isinstance(stream, _CleaningStream) else stream


def raw_stdout() -> TextIO:
    """The real stdout, for the workflow commands the Action itself writes (through the
    guard, a command line of ours would be defused like any other)."""
    return _unwrapped(sys.stdout)


_BREAKS = re.compile(r"(\r\n|\r|\n)")


class _CleaningStream:
    """A text stream that cleans what is written before it reaches the real one; with
    ``defuse``, it also defuses every workflow command in what is written (whoever wrote
    it: a log line naming a challenger, a library's warning, a traceback); on a terminal,
    it drops the escape strings no command of ours writes."""

    def __init__(self, inner: TextIO, *, defuse: bool = False) -> None:
        self._inner = inner
        self._defuse = defuse
        # On a terminal, a dataset's or a corpus's text printed by any command must not write
        # the clipboard, hide a link or set the title: no command of ours writes those.
        try:
            self._terminal = inner.isatty()
        except (AttributeError, ValueError):
            self._terminal = False
        # What the current line holds so far while it is only whitespace (a command may still
        # start it); None once it has other text.
        self._line: str | None = ""

    def write(self, text: str) -> int:
        cleaned = clean(text)
        if self._terminal:
            cleaned = without_terminal_strings(cleaned)
        self._inner.write(self._defused(cleaned) if self._defuse else cleaned)
        return len(text)

    def _defused(self, text: str) -> str:
        """Each line defused where it starts, even when a line is written in pieces."""
        out = []
        for i, part in enumerate(_BREAKS.split(text)):
            if i % 2:  # a line break
                out.append(part)
                self._line = ""
                continue
            if self._line is None:  # the line already has text that is not a command
                out.append(defuse_line(part) if "##[" in part else part)
                continue
            whole = self._line + part
            shown = defuse_line(whole)
            out.append(shown[len(self._line) :] if shown.startswith(self._line) else part)
            self._line = whole if not whole.strip() else None
        return "".join(out)

    def writelines(self, lines: Iterable[str]) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str) -> object:
        return getattr(self._inner, name)


def guard_standard_streams(*, defuse_commands: bool = False) -> None:
    """Clean everything printed from now on, tracebacks and library logs included; with
    ``defuse_commands`` (a run inside GitHub Actions), no line printed can be a workflow
    command: only ``raw_stdout`` can write one."""
    if not isinstance(sys.stdout, _CleaningStream):
        sys.stdout = _CleaningStream(sys.stdout, defuse=defuse_commands)
    if not isinstance(sys.stderr, _CleaningStream):
        sys.stderr = _CleaningStream(sys.stderr, defuse=defuse_commands)
