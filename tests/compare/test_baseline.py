"""Reading baseline.json: missing, null, corrupt and wrong-version files."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from retrieval_eval.compare.baseline import (
    BASELINE_MAX_BYTES,
    Baseline,
    BaselineDataset,
    BaselineQuery,
    load_baseline,
)
from retrieval_eval.errors import InputError
from retrieval_eval.vocabulary import ExitCode
from tests.compare.conftest import Project
from tests.support.action import run_cli


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


def test_a_fifo_at_the_baseline_path_is_an_error_at_once_not_a_wait(tmp_path: Path) -> None:
    """No writer ever opens the FIFO: a blocking read would wait until the time bound."""
    project = Project(tmp_path)
    os.mkfifo(project.baseline)
    run = run_cli(tmp_path, "run", "--quiet")
    assert run.returncode == ExitCode.ERROR
    assert run.stderr == (
        "error: baseline.json: is a FIFO (named pipe), not a regular file; refusing to read it\n"
    )
    assert not (project.report_dir / "report.json").exists()
    # `validate` only reads it for the resolution line: it goes on without one.
    checked = run_cli(tmp_path, "validate")
    assert checked.returncode == ExitCode.OK, checked.stderr
    assert "resolution: keyword.jsonl: known after the first run measures it" in checked.stderr


def test_a_baseline_past_its_size_bound_is_refused_without_reading_it(tmp_path: Path) -> None:
    project = Project(tmp_path)
    with project.baseline.open("wb") as sparse:  # no disk used: a hole, not bytes
        sparse.truncate(BASELINE_MAX_BYTES + 1)
    run = run_cli(tmp_path, "run", "--quiet")
    assert run.returncode == ExitCode.ERROR
    assert run.stderr == (
        f"error: baseline.json: is {BASELINE_MAX_BYTES + 1:,} bytes, more than any baseline "
        f"holds ({BASELINE_MAX_BYTES:,} at most); refusing to read it\n"
    )


def test_a_folder_at_the_baseline_path_is_refused(tmp_path: Path) -> None:
    project = Project(tmp_path)
    project.baseline.mkdir()
    run = run_cli(tmp_path, "run", "--quiet")
    assert run.returncode == ExitCode.ERROR
    assert run.stderr == "error: baseline.json: cannot read file: Is a directory\n"


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


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=4),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner),
    max_leaves=8,
)
_QUERY = st.fixed_dictionaries(
    {},
    optional={
        "query": _JSON,
        "first_relevant_rank": _JSON,
        "metrics": st.dictionaries(st.sampled_from(["mrr@10", "p@5"]), _JSON) | _JSON,
        "judge_fingerprint": _JSON,
        "judge_score": _JSON,
        "retrieved": st.lists(st.text(max_size=3), max_size=3) | _JSON,
        "extra": _JSON,
    },
)


def _step_by_step(text: str) -> Baseline | str:
    """What load_baseline made of a text before it was parsed in one step."""
    data = json.loads(text)
    if data.get("schema_version") not in (None, 1):
        return "unsupported"
    try:
        baseline = Baseline.model_validate(data)
    except ValidationError:
        return "malformed"
    entries = baseline.datasets.values()
    if any(entry is not None and entry.corruption(()) for entry in entries):
        return "corrupt"
    return baseline


@given(
    st.dictionaries(st.sampled_from(["q1", "q2"]), _QUERY),
    st.sampled_from([None, 1, 2, "1"]),
    st.sampled_from([{}, {"mrr@10": 0.5}]),
)
def test_parsing_the_text_directly_reads_what_json_loads_reads(
    queries: dict[str, object], version: object, aggregates: dict[str, float]
) -> None:
    """A well-formed baseline is validated from its text in one step: it must read every
    file as the standard library's parse then validation does."""
    entry = {"aggregates": aggregates, "queries": queries}
    data: dict[str, object] = {"datasets": {"d.jsonl": entry}}
    if version is not None:
        data["schema_version"] = version
    text = json.dumps(data)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "baseline.json"
        path.write_text(text, encoding="utf-8")
        try:
            loaded: Baseline | str | None = load_baseline(path)
        except InputError as error:
            message = str(error)
            kinds = {"not supported": "unsupported", "malformed": "malformed", "corrupt": "corrupt"}
            loaded = next(kind for words, kind in kinds.items() if words in message)
    assert loaded == _step_by_step(text)
