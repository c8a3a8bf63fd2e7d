"""`retrieval-eval corpus ids`: the ids a fixture may name, for every kind of corpus."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.author.cli import retrieval_eval
from tests.load.test_bear import make_bear_database


def _markdown(root: Path) -> str:
    (root / "kb" / "travel").mkdir(parents=True)
    (root / "kb" / "travel" / "lisbon.md").write_text("# Lisbon\n\nTrams are cheap.\n")
    (root / "kb" / "pasta.markdown").write_text("---\ntitle: Carbonara\n---\nEggs, no cream.\n")
    (root / "kb" / "empty.md").write_text("---\ntags: [x]\n---\n")
    return "kb"


def _jsonl(root: Path) -> str:
    lines = [
        {"id": "doc-b", "title": "Second", "text": "b"},
        {"id": "doc-a", "title": "First\nline", "text": "a"},
    ]
    (root / "docs.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    return "docs.jsonl"


def _beir(root: Path) -> str:
    (root / "scifact").mkdir()
    lines = [{"_id": "12", "title": "Cells", "text": "x"}, {"_id": "3", "title": "", "text": "y"}]
    (root / "scifact" / "corpus.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    return "scifact"


def _bear(root: Path) -> str:
    make_bear_database(root / "bear.sqlite")
    return "bear.sqlite"


@pytest.mark.parametrize(
    ("make", "expected", "empty"),
    [
        (_markdown, ["pasta\tCarbonara", "travel/lisbon\tLisbon"], 1),
        (_jsonl, ["doc-a\tFirst line", "doc-b\tSecond"], 0),
        (_beir, ["12\tCells", "3\t"], 0),
        (
            _bear,
            ["UUID-NOTITLE\tFirst line is the title", "UUID-PASTA\tCarbonara", "UUID-TRIP\tLisbon"],
            1,
        ),
    ],
    ids=["markdown", "jsonl", "beir", "bear"],
)
def test_every_kind_of_corpus_lists_its_ids_sorted_one_a_line(
    tmp_path: Path, make: Callable[[Path], str], expected: list[str], empty: int
) -> None:
    path = make(tmp_path)

    titled = retrieval_eval("corpus", "ids", path, "--titles", cwd=tmp_path)
    plain = retrieval_eval("corpus", "ids", path, cwd=tmp_path)

    assert titled.returncode == 0, titled.stderr
    assert titled.stdout.splitlines() == expected
    assert plain.stdout.splitlines() == [line.split("\t")[0] for line in expected]
    summary = titled.stderr.strip()
    assert summary.startswith(f"{len(expected)} documents in ")
    if empty:
        assert summary.endswith(f"; {empty} empty left out (a run skips them)")


def test_without_a_path_it_lists_the_configured_corpus(tmp_path: Path) -> None:
    _markdown(tmp_path)
    (tmp_path / "retrieval-eval.toml").write_text('corpus = "kb"\n')

    listed = retrieval_eval("corpus", "ids", cwd=tmp_path)

    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.splitlines() == ["pasta", "travel/lisbon"]


def test_a_missing_corpus_is_an_error_naming_it(tmp_path: Path) -> None:
    listed = retrieval_eval("corpus", "ids", "nowhere", cwd=tmp_path)

    assert listed.returncode == 2
    assert "nowhere" in listed.stderr


@pytest.mark.slow
@settings(
    max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    ids=st.lists(
        st.text(
            st.characters(codec="utf-8", exclude_categories=("Cs", "Cc", "Zl", "Zp")), min_size=1
        ),
        min_size=1,
        max_size=5,
        unique=True,
    )
)
def test_any_jsonl_ids_come_back_exactly_one_a_line(tmp_path: Path, ids: list[str]) -> None:
    """Whatever a JSONL corpus's ids are, the listing is exactly the ids `validate` accepts."""
    corpus = tmp_path / "any.jsonl"
    corpus.write_text("".join(json.dumps({"id": i, "title": "", "text": "t"}) + "\n" for i in ids))
    listed = retrieval_eval("corpus", "ids", str(corpus), cwd=tmp_path)
    if listed.returncode != 0:
        # The loader refuses some ids (blank, or with characters ids may not hold): an error
        # naming the file, never a listing that differs from what validate would check.
        assert listed.returncode == 2 and "any.jsonl" in listed.stderr, listed.stderr
        return
    assert listed.stdout.split("\n")[:-1] == sorted(ids)
