"""The one redaction choke point: a registered secret is masked in every form a leak
takes (raw, URL-encoded, JSON-escaped, base64 at any alignment, inside a basic-auth
header), and a guarded stream cleans and defuses whatever is printed."""

from __future__ import annotations

import base64
import io
import json
import secrets
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from urllib.parse import quote, quote_plus

from hypothesis import given
from hypothesis import strategies as st

from retrieval_eval.trust import redaction
from retrieval_eval.trust.redaction import (
    MASK,
    MIN_SECRET_CHARS,
    announce_masks,
    clean,
    clean_utf8,
    clean_utf8_bytes,
    register_secret,
    secret_forms,
)
from tests.support.runner_log import obeyed_commands


def fresh_secret() -> str:
    """A value no other test registers (the registry lives as long as the process)."""
    return f"s3cr%t/{secrets.token_hex(10)}+=~~~???"  # base64 of ~~~??? has + and /


@contextmanager
def registered(secret: str) -> Iterator[None]:
    """``secret`` registered for the block only: a generated value such as "000000" must
    not mask the reports other tests in this process write."""
    forms, ordered = set(redaction._forms), list(redaction._ordered)
    register_secret(secret)
    try:
        yield
    finally:
        redaction._forms.clear()
        redaction._forms.update(forms)
        redaction._ordered[:] = ordered


def leaks(secret: str) -> list[str]:
    return [
        secret,
        quote(secret, safe=""),
        quote_plus(secret),
        json.dumps(secret)[1:-1],
        base64.b64encode(f"x-access-token:{secret}".encode()).decode(),
        base64.b64encode(f"{secret}:x-oauth-basic".encode()).decode(),
        base64.urlsafe_b64encode(f"ab{secret}".encode()).decode(),
    ]


def test_every_form_of_a_registered_secret_is_masked() -> None:
    secret = fresh_secret()
    register_secret(secret)
    for leak in leaks(secret):
        shown = clean(f"Authorization: Basic {leak} end")
        assert MASK in shown, leak
        assert secret not in shown and quote(secret, safe="") not in shown
        for form in secret_forms(secret):
            assert form not in shown
    assert clean_utf8(f"→ {secret}") == "→ ***".encode()
    assert clean_utf8_bytes(f'{{"k": "{secret}"}}'.encode()) == b'{"k": "***"}'


def test_a_secret_inside_a_longer_one_leaves_nothing_of_the_longer_one() -> None:
    short = fresh_secret()
    register_secret(short)
    long = short + "-and-more"
    register_secret(long)
    assert clean(f"[{long}]") == "[***]"


def test_a_short_value_or_none_masks_nothing() -> None:
    register_secret(None)
    register_secret("")
    register_secret("a" * (MIN_SECRET_CHARS - 1))
    assert clean("aaaaa and the rest") == "aaaaa and the rest"
    assert secret_forms("abc") == set()


def test_a_lone_surrogate_is_replaced_so_the_text_can_be_written() -> None:
    assert clean("bad \ud800 char") == "bad \ufffd char"
    assert clean_utf8("bad \udfff") == "bad \ufffd".encode()


@given(
    st.text(st.characters(codec="utf-8"), min_size=MIN_SECRET_CHARS, max_size=24),
    st.text(max_size=20),
    st.text(max_size=20),
    st.integers(min_value=0, max_value=6),
)
def test_a_secret_in_any_text_is_never_shown(
    secret: str, before: str, after: str, form: int
) -> None:
    with registered(secret):
        shown = clean(before + leaks(secret)[form] + after)
    assert secret not in shown
    if form == 0:
        assert MASK in shown


def test_the_runner_is_told_each_form_once() -> None:
    secret = fresh_secret()
    register_secret(secret)
    first, again = io.StringIO(), io.StringIO()
    announce_masks(first)
    announce_masks(again)
    masks = [c.data for c in obeyed_commands(first.getvalue()) if c.name == "add-mask"]
    assert secret.replace("%", "%25") in masks
    assert quote(secret, safe="").replace("%", "%25") in masks
    assert again.getvalue() == ""


GUARDED = """\
import sys
from retrieval_eval.trust.redaction import guard_standard_streams, raw_stdout, register_secret
register_secret(sys.argv[1])
guard_standard_streams(defuse_commands=True)
print("token=" + sys.argv[1])
print("::error::forged by a retriever")
sys.stdout.write("  ")
sys.stdout.write("::warning::forged in pieces\\n")
print("a ##[error]old form", file=sys.stderr)
raw_stdout().write("::notice::ours\\n")
"""


def test_a_guarded_process_prints_no_secret_and_no_command_but_its_own() -> None:
    secret = fresh_secret()
    done = subprocess.run(
        [sys.executable, "-c", GUARDED, secret],
        capture_output=True,
        text=True,
        check=True,
    )
    assert done.stdout.splitlines()[0] == "token=***"
    assert secret not in done.stdout + done.stderr
    assert [c.name for c in obeyed_commands(done.stdout + done.stderr)] == ["notice"]
