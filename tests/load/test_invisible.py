"""Which code points cannot be seen, and the id rule built on them."""

from __future__ import annotations

import re
import unicodedata

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from retrieval_eval.load.fixtures import Fixture
from retrieval_eval.load.invisible import (
    code_point_name,
    invisible_chars,
    is_invisible,
    same_id,
    shown_code_point,
)


def _fixture(query_id: str, doc_id: str = "notes/a") -> dict[str, object]:
    return {
        "query_id": query_id,
        "query": "a query",
        "retrieval_type": "keyword",
        "expected_top_k_ids": [doc_id],
        "ground_truth_source": "human-annotated",
    }


@pytest.mark.parametrize(
    "char",
    [
        "\u2060",
        "\u200b",
        "\u200d",
        "\ufeff",
        "\u00ad",
        "\u034f",
        "\u180e",
        "\u3164",
        "\ufe0f",
        "\U000e0001",
        "\U000e0100",
        "\u202e",
        "\u2066",
        "\x00",
        "\t",
        "\x7f",
        "\u0085",
        "\u2028",
        "\u00a0",
        "\u2007",
        "\u3000",
        "\u2800",
        "\ue000",
        "\U0010fffd",
    ],
)
def test_invisible_code_points(char: str) -> None:
    assert is_invisible(char)


@pytest.mark.parametrize("char", ["a", " ", "-", "é", "日", "\u0301", "😀", "ß", "_", "/"])
def test_visible_code_points(char: str) -> None:
    assert not is_invisible(char)


def test_a_code_point_is_named_and_shown_as_an_escape() -> None:
    assert code_point_name("\u2060") == "U+2060 WORD JOINER"
    assert shown_code_point("\u2060") == "\\u2060"
    assert shown_code_point("\U000e0041") == "\\U000e0041"


@given(st.text(min_size=1, max_size=12))
def test_an_id_is_refused_exactly_when_it_holds_an_invisible_code_point(query_id: str) -> None:
    hidden = invisible_chars(query_id)
    try:
        fixture = Fixture.model_validate(_fixture(query_id))
    except ValidationError as error:
        assert hidden, error
        for char in hidden:
            assert code_point_name(char) in str(error)
        return
    assert not hidden
    assert fixture.query_id == unicodedata.normalize("NFC", query_id)


@given(st.text(alphabet=st.characters(categories=["L", "N", "P"]), min_size=1, max_size=8))
def test_ids_compare_in_nfc(query_id: str) -> None:
    """The same letters typed composed or decomposed are one id."""
    nfd = unicodedata.normalize("NFD", query_id)
    assert same_id(nfd) == same_id(query_id) == unicodedata.normalize("NFC", query_id)


@given(st.text(min_size=1, max_size=8), st.sampled_from(["\u2060", "\u200b", "\ufeff"]))
def test_no_two_accepted_ids_differ_only_by_an_invisible_code_point(base: str, joiner: str) -> None:
    """What the gate relies on: ``k-005`` and ``k-005`` + U+2060 cannot both be ids."""
    with pytest.raises(ValidationError, match=re.escape(code_point_name(joiner))):
        Fixture.model_validate(_fixture(base + joiner))


def test_expected_document_ids_follow_the_rule_too() -> None:
    with pytest.raises(ValidationError, match="U\\+200B ZERO WIDTH SPACE"):
        Fixture.model_validate(_fixture("k-1", "notes/a\u200b"))
