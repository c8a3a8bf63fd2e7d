"""What `generate` asks the model, and the one reply shape it accepts: a prompt per
query style, and a reply that is exactly the expected JSON object or a GenerateError
naming what is wrong with it."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from retrieval_eval.author.claude import GenerateError
from retrieval_eval.author.prompts import Passage, build_prompt, parse_answer
from tests.author.fake_writer import answer

PASSAGES = (
    Passage("recipes/bread", "Bread", "Rest the dough for an hour. " + "x" * 4000),
    Passage("recipes/pasta", "Pasta", "Salt the water."),
)


def test_a_prompt_shows_the_style_the_rare_terms_and_each_passage_by_id() -> None:
    prompt = build_prompt("exact_match", PASSAGES, rare_terms=("dough", "hour"))
    assert "use at least two of the rare terms below exactly as written" in prompt
    assert "Rare terms: dough, hour" in prompt
    assert "Passage 1 (id recipes/bread):\nTitle: Bread\nRest the dough" in prompt
    assert "Passage 2 (id recipes/pasta):\nTitle: Pasta\nSalt the water." in prompt
    assert "x" * 3001 not in prompt  # a long passage is cut
    assert prompt.endswith("Salt the water.")


def test_a_tag_and_a_rejection_are_said_and_no_rare_terms_say_none() -> None:
    prompt = build_prompt(
        "tag_filter", PASSAGES[1:], rare_terms=(), tag="recipes", feedback="It copied a phrase."
    )
    assert "Rare terms: (none)" in prompt
    assert "\n\nTag: recipes\n\n" in prompt
    assert "Your previous attempt was rejected: It copied a phrase. Write a different query." in (
        prompt
    )


@pytest.mark.parametrize(
    ("reply", "problem"),
    [
        ("no JSON here", "is not a JSON object"),
        (
            '{"query": "q", "expected_keywords": []}',
            "does not have exactly the keys query, expected_keywords, answer_context",
        ),
        (
            '{"query": " ", "expected_keywords": [], "answer_context": ""}',
            "has no query, or one longer than 300 characters",
        ),
        (
            '{"query": "q", "expected_keywords": [""], "answer_context": ""}',
            "has expected_keywords that are not a list of non-empty strings",
        ),
        (
            '{"query": "q", "expected_keywords": [], "answer_context": 3}',
            "has an answer_context that is not a string",
        ),
        (
            '{"query": "q\\ud800", "expected_keywords": [], "answer_context": ""}',
            "holds text that is not valid Unicode (a lone surrogate)",
        ),
    ],
)
def test_a_bad_reply_names_what_is_wrong_and_quotes_it(reply: str, problem: str) -> None:
    with pytest.raises(GenerateError) as caught:
        parse_answer(reply, about="recipes/bread")
    assert str(caught.value) == f"the model's answer for recipes/bread {problem}: {reply!r}"


@given(st.text(max_size=300))
def test_any_reply_is_an_answer_or_a_generate_error(reply: str) -> None:
    try:
        parsed = parse_answer(reply, about="q")
    except GenerateError:
        return
    assert parsed.query.strip()


@given(
    st.text(min_size=1, max_size=100).filter(str.strip),
    st.lists(st.text(min_size=1, max_size=20).filter(str.strip), max_size=4),
    st.text(max_size=100),
)
def test_a_well_formed_reply_is_parsed_whatever_its_text(
    query: str, keywords: list[str], context: str
) -> None:
    try:
        parsed = parse_answer(f"```json\n{answer(query, keywords, context)}\n```", about="q")
    except GenerateError as error:
        assert "surrogate" in str(error)
        return
    assert parsed.query == " ".join(query.split())
    assert list(parsed.expected_keywords) == keywords
