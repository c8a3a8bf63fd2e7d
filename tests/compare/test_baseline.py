"""Reading baseline.json: missing, null, corrupt and wrong-version files."""

from __future__ import annotations

from pathlib import Path

import pytest

from retrieval_eval.compare.baseline import Baseline, BaselineDataset, BaselineQuery, load_baseline
from retrieval_eval.errors import InputError
from retrieval_eval.vocabulary import ExitCode


def test_missing_file_means_no_baseline(tmp_path: Path) -> None:
    assert load_baseline(tmp_path / "baseline.json") is None


@pytest.mark.parametrize(
    "text",
    [
        '{"datasets": {"hybrid.jsonl": null}}',
        '{"datasets": {"hybrid.jsonl": {"aggregates": null}}}',
        '{"datasets": {"hybrid.jsonl": {"aggregates": {"mrr@10": null}, "queries": {}}}}',
        '{"datasets": {"hybrid.jsonl": {"aggregates": {"mrr@10": 0.9},'
        ' "queries": {"q1": {"metrics": {"mrr@10": null}}}}}}',
        "{}",
    ],
)
def test_null_values_are_not_established(tmp_path: Path, text: str) -> None:
    path = tmp_path / "baseline.json"
    path.write_text(text, encoding="utf-8")
    baseline = load_baseline(path)
    assert baseline is not None
    assert baseline.established("hybrid.jsonl") is None


def test_complete_values_are_established() -> None:
    entry = BaselineDataset(
        aggregates={"mrr@10": 0.5},
        queries={"q1": BaselineQuery(query="x", first_relevant_rank=2, metrics={"mrr@10": 0.5})},
    )
    assert Baseline(datasets={"hybrid.jsonl": entry}).established("hybrid.jsonl") == entry


def test_invalid_json_names_file_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "baseline.json"
    path.write_text('{\n  "datasets": {,\n}', encoding="utf-8")
    with pytest.raises(InputError) as caught:
        load_baseline(path)
    assert caught.value.exit_code == ExitCode.ERROR
    assert str(caught.value) == (
        f"{path}:2: the baseline is not valid JSON (Expecting property name enclosed in double "
        "quotes, column 16); fix it, or delete it to establish a new baseline"
    )


def test_wrong_shape_names_the_key(tmp_path: Path) -> None:
    path = tmp_path / "baseline.json"
    path.write_text('{"datasets": {"hybrid.jsonl": {"aggregates": {"mrr@10": "high"}}}}', "utf-8")
    with pytest.raises(InputError) as caught:
        load_baseline(path)
    assert str(caught.value) == (
        f"{path}: the baseline is malformed at 'datasets.hybrid.jsonl.aggregates.mrr@10': "
        "Input should be a valid number, unable to parse string as a number"
    )


def test_newer_schema_version_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "baseline.json"
    path.write_text('{"schema_version": 7, "datasets": {}}', encoding="utf-8")
    with pytest.raises(InputError) as caught:
        load_baseline(path)
    assert "baseline schema_version 7 is not supported (expected 1)" in str(caught.value)
