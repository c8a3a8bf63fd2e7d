from __future__ import annotations

import json
from pathlib import Path

import pytest

from retrieval_eval.action.fork import (
    COMMENT_FILE,
    METADATA_FILE,
    ForkMetadata,
    neutralize_mentions,
    read_fork_results,
    write_fork_results,
)
from retrieval_eval.errors import InputError

HEAD = "a" * 40


def metadata(**changes: object) -> ForkMetadata:
    fields: dict[str, object] = {
        "pr_number": 8,
        "head_sha": HEAD,
        "verdict": "regression",
        "status_description": "regression: ndcg@10 0.81 → 0.70 (−13.6%)",
        "comment_id": "retrieval-eval",
        "has_comment": True,
    }
    fields.update(changes)
    return ForkMetadata.model_validate(fields)


def test_round_trip(tmp_path: Path) -> None:
    write_fork_results(tmp_path, metadata(), "### Regression\n")
    results = read_fork_results(tmp_path)
    assert results is not None
    assert results.metadata == metadata()
    assert results.comment_markdown == "### Regression\n"
    assert json.loads((tmp_path / METADATA_FILE).read_text()) == {
        "schema_version": 1,
        "pr_number": 8,
        "head_sha": HEAD,
        "verdict": "regression",
        "status_description": "regression: ndcg@10 0.81 → 0.70 (−13.6%)",
        "comment_id": "retrieval-eval",
        "has_comment": True,
    }


def test_nothing_left_behind_is_none(tmp_path: Path) -> None:
    assert read_fork_results(tmp_path) is None


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"head_sha": "HEAD"}, "field 'head_sha': String should match pattern '^[0-9a-f]{40}$'"),
        ({"pr_number": 0}, "field 'pr_number': Input should be greater than 0"),
        (
            {"verdict": "approved"},
            "field 'verdict': Input should be 'passed', 'regression', "
            "'threshold', 'baseline-established', 'skipped', 'accepted', 'invalid' or 'error'",
        ),
        (
            {"verdict": "accepted"},
            "field 'verdict': Value error, a fork's run cannot accept a regression",
        ),
        (
            {"status_description": "x" * 141},
            "field 'status_description': String should have at most 140 characters",
        ),
        (
            {"comment_id": "../../x"},
            "field 'comment_id': String should match pattern '^[A-Za-z0-9][A-Za-z0-9._/-]{0,99}$'",
        ),
        ({"context": "ci/tests"}, "field 'context': Extra inputs are not permitted"),
    ],
)
def test_crafted_metadata_is_refused_with_the_field_named(
    tmp_path: Path, change: dict[str, object], message: str
) -> None:
    data = json.loads(metadata().model_dump_json())
    data.update(change)
    (tmp_path / METADATA_FILE).write_text(json.dumps(data))
    (tmp_path / COMMENT_FILE).write_text("hi")
    with pytest.raises(InputError) as caught:
        read_fork_results(tmp_path)
    assert str(caught.value) == f"{tmp_path / METADATA_FILE}: {message}"


def test_an_oversized_comment_is_refused(tmp_path: Path) -> None:
    write_fork_results(tmp_path, metadata(), "x" * 65_600)
    with pytest.raises(InputError, match="longer than a GitHub comment may be"):
        read_fork_results(tmp_path)


def test_a_missing_comment_file_is_refused_when_one_was_promised(tmp_path: Path) -> None:
    write_fork_results(tmp_path, metadata(), None)
    with pytest.raises(InputError, match=f"{COMMENT_FILE}: missing"):
        read_fork_results(tmp_path)


def test_mentions_from_a_fork_cannot_ping_anyone() -> None:
    text = "thanks @maintainer and @org/team, merci café@maintainer; mail a@b.example; `@code`"
    assert neutralize_mentions(text) == (
        "thanks @\u2060maintainer and @\u2060org/team, merci café@\u2060maintainer; "
        "mail a@b.example; `@\u2060code`"
    )
