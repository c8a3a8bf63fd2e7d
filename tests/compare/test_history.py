"""retrieval-eval-history.jsonl: appended one line per run, read back for the sparklines."""

from __future__ import annotations

import tempfile
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from retrieval_eval.compare.history import (
    AcceptedBy,
    append_history,
    read_history,
    recent_values,
)
from retrieval_eval.errors import InputError

names = st.text(min_size=1, max_size=20)
aggregates = st.dictionaries(
    names, st.dictionaries(names, st.floats(allow_nan=False, allow_infinity=False), max_size=4),
    max_size=4,
)  # fmt: skip


def test_the_history_sits_next_to_the_baseline(tmp_path: Path) -> None:
    from retrieval_eval.settings import load_settings

    (tmp_path / "retrieval-eval.toml").write_text('baseline = "evals/baseline.json"\n')
    settings = load_settings(workdir=tmp_path, config_file=None, overrides={})
    assert settings.history == tmp_path.resolve() / "evals" / "retrieval-eval-history.jsonl"


@settings(deadline=None)  # writes files: a loaded machine makes single examples slow
@given(st.lists(aggregates, min_size=1, max_size=5))
def test_appended_lines_read_back_in_order(runs: list[dict[str, dict[str, float]]]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "retrieval-eval-history.jsonl"
        for number, run in enumerate(runs):
            append_history(
                path, commit=f"{number:040x}", date=datetime(2026, 1, 1, tzinfo=UTC), aggregates=run
            )
        entries = read_history(path)
        assert [entry.aggregates for entry in entries] == runs
        assert [entry.commit for entry in entries] == [f"{n:040x}" for n in range(len(runs))]
        assert len(path.read_text(encoding="utf-8").splitlines()) == len(runs)


def test_recent_values_keep_the_last_nineteen_per_dataset_and_metric(tmp_path: Path) -> None:
    path = tmp_path / "retrieval-eval-history.jsonl"
    for value in range(25):
        append_history(
            path,
            commit="c" * 40,
            date=datetime(2026, 1, 1, tzinfo=UTC),
            aggregates={"hybrid.jsonl": {"mrr@10": float(value)}},
        )
    series = recent_values(read_history(path))
    assert series == {"hybrid.jsonl": {"mrr@10": tuple(float(v) for v in range(6, 25))}}


def test_a_missing_history_is_empty(tmp_path: Path) -> None:
    assert read_history(tmp_path / "retrieval-eval-history.jsonl") == []


def test_a_hand_edited_line_that_breaks_is_named_with_its_line(tmp_path: Path) -> None:
    path = tmp_path / "retrieval-eval-history.jsonl"
    good = '{"commit": "abc", "date": "2026-01-01T00:00:00Z", "aggregates": {}}'
    path.write_text(f'{good}\n\n{{"commit": "abc", "aggregates": {{}}}}\n', encoding="utf-8")

    with pytest.raises(InputError) as raised:
        read_history(path)

    assert str(raised.value).startswith(f"{path}:3: not a history line (date: Field required)")
    assert "Fix or delete the line" in str(raised.value)


def test_a_file_without_a_final_newline_still_gets_a_line_of_its_own(tmp_path: Path) -> None:
    path = tmp_path / "retrieval-eval-history.jsonl"
    path.write_text('{"commit": null, "date": "2026-01-01T00:00:00Z", "aggregates": {}}')
    append_history(path, commit="d" * 40, date=datetime(2026, 1, 2, tzinfo=UTC), aggregates={})
    assert [entry.commit for entry in read_history(path)] == [None, "d" * 40]


@settings(deadline=None)
@given(
    st.text(min_size=1, max_size=39),
    st.integers(min_value=1, max_value=10**6),
    st.text(min_size=1, max_size=50),
)
def test_an_accepted_merge_records_who_accepted_it_and_other_lines_stay_as_they_were(
    login: str, number: int, label: str
) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "retrieval-eval-history.jsonl"
        date = datetime(2026, 1, 1, tzinfo=UTC)
        append_history(path, commit="a" * 40, date=date, aggregates={"d": {"mrr@10": 1.0}})
        append_history(
            path,
            commit="b" * 40,
            date=date,
            aggregates={"d": {"mrr@10": 0.5}},
            accepted=AcceptedBy(login, number, label),
        )
        plain, accepted = read_history(path)
        assert (plain.accepted_by, plain.pull_request, plain.label) == (None, None, None)
        assert (accepted.accepted_by, accepted.pull_request, accepted.label) == (
            login,
            number,
            label,
        )
        # A line without an acceptance carries no empty keys for it.
        assert "accepted_by" not in path.read_text(encoding="utf-8").splitlines()[0]
