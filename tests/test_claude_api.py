"""The one Messages API call, against a real HTTP server on 127.0.0.1 through the real
client: the reply and its token counts, or the caller's own error naming what failed;
and the reply's JSON, fenced or not, or None."""

from __future__ import annotations

import json
import socket
from typing import Any

import anthropic
import pytest
from hypothesis import given
from hypothesis import strategies as st

from retrieval_eval.claude_api import ask_claude, json_reply, shown_reply
from retrieval_eval.errors import RetrievalEvalError
from tests.support.fake_anthropic import FakeAnthropic


class JudgeError(RetrievalEvalError):
    pass


def client(base_url: str, key: str = "test-key") -> anthropic.Anthropic:
    return anthropic.Anthropic(api_key=key, base_url=base_url, max_retries=1)


def ask(base_url: str, key: str = "test-key") -> Any:
    return ask_claude(
        client(base_url, key),
        model="claude-test",
        max_tokens=64,
        prompt="grade this",
        failure=JudgeError,
        about="the judge's call",
        status_note=" (check ANTHROPIC_API_KEY)",
    )


def test_the_reply_and_what_it_cost() -> None:
    with FakeAnthropic(responder=lambda body: (200, '{"grade": 2}')) as fake:
        reply = ask(fake.base_url)
    assert (reply.text, reply.input_tokens, reply.output_tokens) == ('{"grade": 2}', 1200, 8)
    [request] = fake.requests
    assert request.body["messages"] == [{"role": "user", "content": "grade this"}]
    assert (request.body["model"], request.body["max_tokens"]) == ("claude-test", 64)


def test_an_error_status_is_the_callers_error_with_the_status_and_the_note() -> None:
    with FakeAnthropic() as fake, pytest.raises(JudgeError) as caught:
        ask(fake.base_url, key="wrong-key")
    assert str(caught.value) == "the judge's call failed with HTTP 401 (check ANTHROPIC_API_KEY)"


def test_a_server_that_keeps_failing_is_reported_after_the_clients_retries() -> None:
    with (
        FakeAnthropic(responder=lambda body: (500, "overloaded")) as fake,
        pytest.raises(JudgeError, match=r"failed with HTTP 500 \(check"),
    ):
        ask(fake.base_url)
    assert len(fake.requests) == 2  # the call and the client's one retry


def test_no_server_is_a_connection_error_by_name() -> None:
    with socket.socket() as unused:
        unused.bind(("127.0.0.1", 0))
        port = unused.getsockname()[1]
    with pytest.raises(JudgeError) as caught:
        ask(f"http://127.0.0.1:{port}")
    assert str(caught.value) == "the judge's call failed: APIConnectionError"


@pytest.mark.parametrize(
    ("reply", "value"),
    [
        ('{"grade": 2}', {"grade": 2}),
        ('  ```json\n{"grade": 2}\n```  ', {"grade": 2}),
        ("```\n[1, 2]\n```", [1, 2]),
        ('Sure! {"grade": 2}', None),
        ('```json\n{"grade": 2}\n``` and more', None),
        ("[" * 100_000, None),
    ],
)
def test_only_json_or_fenced_json_is_read(reply: str, value: object) -> None:
    assert json_reply(reply) == value


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
    max_leaves=8,
)


@given(_json, st.booleans())
def test_any_json_value_reads_back_fenced_or_not(value: object, fenced: bool) -> None:
    text = json.dumps(value)
    assert json_reply(f"```json\n{text}\n```" if fenced else text) == value


def test_a_quoted_reply_is_cut_to_200_characters() -> None:
    assert shown_reply("short") == "'short'"
    assert shown_reply("x" * 500) == repr("x" * 200 + "…")
