"""The JSONPath subset that maps a search service's answer onto hits: keys by dots, list
positions in brackets, an optional leading ``$``; anything else refused with where it got
stuck. A path written from its steps reads back as those steps, and following it finds
the value placed there, or MISSING where the answer has no such place."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from retrieval_eval.retrieval.external.json_path import (
    MISSING,
    PathError,
    Step,
    follow,
    parse_path,
)

_keys = st.text("abcxyz_-0123456789 ", min_size=1, max_size=6).filter(
    lambda key: key.strip() == key
)
_steps = st.lists(_keys | st.integers(0, 30), max_size=6)


def written(steps: list[Step], dollar: bool) -> str:
    parts = [f"[{step}]" if isinstance(step, int) else f".{step}" for step in steps]
    path = "".join(parts)
    return "$" + path if dollar else path.removeprefix(".")


def placed(steps: list[Step], leaf: object) -> object:
    """The smallest answer holding ``leaf`` at ``steps`` (other places filled with None)."""
    value = leaf
    for step in reversed(steps):
        value = [None] * step + [value] if isinstance(step, int) else {step: value}
    return value


@given(_steps, st.booleans())
def test_a_written_path_reads_back_as_its_steps(steps: list[Step], dollar: bool) -> None:
    path = written(steps, dollar)
    if not path:
        with pytest.raises(PathError, match="cannot be empty"):
            parse_path(path)
        return
    assert parse_path(path) == tuple(steps)
    assert parse_path(f"  {path} ") == tuple(steps)


@given(_steps, st.booleans())
def test_following_a_path_finds_what_was_placed_there(steps: list[Step], dollar: bool) -> None:
    answer = placed(steps, {"leaf": True})
    assert follow(answer, tuple(steps)) == {"leaf": True}
    if steps:
        # One step too far, or the wrong kind of step, finds nothing.
        assert follow(answer, (*steps, "absent")) is MISSING
        wrong: Step = "0" if isinstance(steps[0], int) else 0
        assert follow(answer, (wrong, *steps[1:])) is MISSING


def test_the_forms_a_mapping_takes() -> None:
    assert parse_path("$") == ()
    assert parse_path("$.data.results") == ("data", "results")
    assert parse_path("data.results") == ("data", "results")
    assert parse_path("results[0].hits") == ("results", 0, "hits")
    answer = {"results": [{"hits": [{"doc": {"id": "n1"}}]}]}
    assert follow(answer, parse_path("$.results[0].hits[0].doc.id")) == "n1"
    assert follow(answer, parse_path("results[1]")) is MISSING
    assert follow(answer, ()) is answer


@pytest.mark.parametrize(
    ("path", "stuck"),
    [
        ("data..results", "..results"),
        ("results[x]", "[x]"),
        ("results[-1]", "[-1]"),
        ("hits[*]", "[*]"),
        ("$..id", "..id"),
    ],
)
def test_filters_wildcards_and_typos_say_where_they_got_stuck(path: str, stuck: str) -> None:
    with pytest.raises(PathError) as raised:
        parse_path(path)
    assert str(raised.value) == (
        f"{path!r} is not a path like 'data.results' or '$.results[0].hits' (stuck at {stuck!r})"
    )


def test_an_empty_path_says_to_use_dollar() -> None:
    with pytest.raises(PathError, match=r"a path cannot be empty \(use '\$' for the whole"):
        parse_path("   ")
